/**
 * The composition root: builds the stores, the embedder, the job activities and the job engine
 * for the configured profile. CLI commands, the MCP server and the API all receive a `Runtime`.
 */
import path from 'node:path';
import type { Config } from '../core/config.js';
import type { Embedder } from '../embed/embedder.js';
import { MiniLmEmbedder } from '../embed/minilm.js';
import { createJobActivities } from '../activities/index.js';
import type { DrawerContext } from '../palace/context.js';
import type { JobEngine } from '../palace/jobs.js';
import type { PalaceStores } from '../stores/open.js';
import { openStores } from '../stores/open.js';
import { LocalJobEngine } from '../workflows/local/runner.js';

export interface Runtime {
  config: Config;
  stores: PalaceStores;
  embedder: Embedder;
  jobs: JobEngine;
  /** Context for the drawer operations of palace/. */
  drawerContext: DrawerContext;
  /** Depth of each BullMQ queue by job state (cluster profile; short jobs run inline otherwise). */
  queueDepths?: () => Promise<Record<string, Record<string, number>>>;
  close(): Promise<void>;
}

export async function openRuntime(config: Config, opts: { embedder?: Embedder } = {}): Promise<Runtime> {
  const embedder = opts.embedder ?? new MiniLmEmbedder(config);
  const stores = await openStores(config);
  const activities = createJobActivities({ config, stores, embedder, workspace: path.join(config.palaceDir, 'workspace') });
  // Cluster jobs run as Temporal workflows on `mempalace worker` processes; the client is loaded
  // only then, so embedded commands never load the Temporal SDK.
  const jobs: JobEngine = config.profile === 'cluster'
    ? await (await import('../workflows/temporal/job-engine.js')).TemporalJobEngine.connect({ palace: stores.palace, jobs: stores.jobs, temporal: config.temporal, timeouts: { leaseMs: config.jobLeaseMs }, mineWindow: config.mineParallelBatches })
    : new LocalJobEngine({ palace: stores.palace, jobs: stores.jobs, locks: stores.locks, activities, leaseMs: config.jobLeaseMs, mineWindow: config.mineParallelBatches });
  const queues = config.profile === 'cluster' ? await openQueues(config) : undefined;
  return {
    config, stores, embedder, jobs,
    drawerContext: { config, drawers: stores.drawers, embedder },
    ...(queues ? { queueDepths: queues.depths } : {}),
    async close() {
      await queues?.close();
      await jobs.close();
      await stores.close();
      if (!opts.embedder) await embedder.close();
    },
  };
}

/** The cluster profile's BullMQ queues, opened only to report their depths. */
async function openQueues(config: Config) {
  const { NotificationQueue, TriggerQueue } = await import('../workflows/queues/queues.js');
  const settings = { redisUrl: config.redis.url, palaceName: config.palaceName };
  const queues = { trigger: new TriggerQueue(settings), notification: new NotificationQueue(settings) };
  return {
    depths: async () => Object.fromEntries(await Promise.all(Object.entries(queues).map(async ([name, q]) => [name, await q.depths()] as const))),
    close: async () => { await Promise.all(Object.values(queues).map((q) => q.close())); },
  };
}
