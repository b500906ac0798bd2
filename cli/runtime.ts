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
import { checkPalaceModel, modelBoundDrawers } from '../palace/palace-model.js';
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
  /** An embedder of the named model (`embedder` itself for its own model), for `mempalace reembed`. */
  embedderFor(model: string): Embedder;
  /** Depth of each BullMQ queue by job state (cluster profile; short jobs run inline otherwise). */
  queueDepths?: () => Promise<Record<string, Record<string, number>>>;
  close(): Promise<void>;
}

/**
 * How the palace's model record is checked at open (palace/palace-model.ts): `serve` refuses
 * another model and a re-embed under way; `worker` accepts a re-embed under way (its activities
 * run it); `reembed` checks nothing (the re-embed job checks for itself). Drawer writes are
 * checked against the record in every case.
 */
export type PalaceModelCheck = 'serve' | 'worker' | 'reembed';

export async function openRuntime(config: Config, opts: { embedder?: Embedder; palaceModel?: PalaceModelCheck } = {}): Promise<Runtime> {
  const embedder = opts.embedder ?? new MiniLmEmbedder(config);
  const others = new Map<string, Embedder>();
  const embedderFor = (model: string): Embedder => {
    if (model === embedder.model) return embedder;
    let other = others.get(model);
    if (other === undefined) {
      other = new MiniLmEmbedder(config, { model });
      others.set(model, other);
    }
    return other;
  };
  const opened = await openStores(config);
  const check = opts.palaceModel ?? 'serve';
  if (check !== 'reembed') {
    await checkPalaceModel(opened.drawers, embedder, check === 'worker' ? 'accept' : 'refuse').catch(async (refusal: unknown) => {
      await opened.close();
      if (!opts.embedder) await embedder.close();
      throw refusal;
    });
  }
  const stores: PalaceStores = { ...opened, drawers: modelBoundDrawers(opened.drawers, embedder.identity) };
  const activities = createJobActivities({ config, stores, embedder, embedderFor, workspace: path.join(config.palaceDir, 'workspace') });
  // Cluster jobs run as Temporal workflows on `mempalace worker` processes; the client is loaded
  // only then, so embedded commands never load the Temporal SDK.
  const jobs: JobEngine = config.profile === 'cluster'
    ? await (await import('../workflows/temporal/job-engine.js')).TemporalJobEngine.connect({ palace: stores.palace, jobs: stores.jobs, temporal: config.temporal, timeouts: { leaseMs: config.jobLeaseMs } })
    : new LocalJobEngine({ palace: stores.palace, jobs: stores.jobs, locks: stores.locks, activities, leaseMs: config.jobLeaseMs });
  const queues = config.profile === 'cluster' ? await openQueues(config) : undefined;
  return {
    config, stores, embedder, jobs,
    drawerContext: { config, drawers: stores.drawers, embedder },
    embedderFor,
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
