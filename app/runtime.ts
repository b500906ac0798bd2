/**
 * The composition root: builds the stores, the embedder, the job engine (with the job activities
 * when jobs run in this process), the short-job queues and the logstream context for the
 * configured profile. CLI commands, the MCP server, the API and the worker all receive a `Runtime`.
 */
import path from 'node:path';
import type { Config } from '../core/config.js';
import type { Logger } from '../core/log.js';
import { createLogger } from '../core/log.js';
import type { Embedder } from '../embed/embedder.js';
import { encoderSetText, parseEncoderSet } from '../core/encoder-set.js';
import { configuredEmbedder, embedderOfSetText } from '../embed/encoder-set.js';
import { createJobActivities } from '../jobs/activities.js';
import type { JobEngine, JobProgress, JobSpec } from '../jobs/job.js';
import type { LogstreamContext } from '../palace/logstream/logstream.js';
import { checkPalaceModel, modelBoundDrawers } from '../palace/drawers/palace-model.js';
import type { Runtime } from '../palace/runtime.js';
import type { PalaceStores } from '../stores/ports/palace-stores.js';
import { openStores } from '../stores/open.js';
import { LocalJobEngine } from '../jobs/engines/local/runner.js';
import { checkNotifySettings, deliverJobEnd } from '../jobs/notify.js';
import { migrateRegisteredSources, refreshRegisteredSource } from '../palace/sources/registered-sources.js';
import { InlineNotifications } from '../jobs/engines/local/inline-notifications.js';
import { RefreshDebouncer } from '../jobs/engines/local/refresh-debouncer.js';
import type { TracingRole } from './tracing/sdk.js';
import { startTracing } from './tracing/sdk.js';
import { tracedActivities, tracedJobEngine } from './tracing/traced-jobs.js';
import { tracedStores } from './tracing/traced-stores.js';
import { callRuntime } from './call-runtime.js';

/**
 * The logger LOG_LEVEL and LOG_FORMAT ask for; without LOG_FORMAT, server processes (`serve`,
 * `worker`) write JSON lines and every other command readable lines. It reports the settings the
 * configuration replaced by their defaults.
 */
export function processLogger(config: Config, server = false): Logger {
  const log = createLogger({ level: config.log.level, format: config.log.format ?? (server ? 'json' : 'pretty') });
  for (const w of config.warnings) log.warn({ variable: w.variable, rule: w.rule }, w.message);
  return log;
}

/**
 * How the palace's model record is checked at open (palace/drawers/palace-model.ts): `serve` refuses
 * another model and a re-embed under way; `worker` accepts a re-embed under way (its activities
 * run it); `reembed` checks nothing (the re-embed job checks for itself). Drawer writes are
 * checked against the record in every case.
 */
export type PalaceModelCheck = 'serve' | 'worker' | 'reembed';

export async function openRuntime(config: Config,
  opts: { embedder?: Embedder; palaceModel?: PalaceModelCheck; log?: Logger; role?: TracingRole } = {}): Promise<Runtime> {
  const log = opts.log ?? processLogger(config);
  // Once per process, and only when an OTLP endpoint is configured (app/tracing/sdk.ts).
  const tracing = await startTracing(opts.role ?? 'cli');
  // Embedded deliveries happen in this process: refuse unsigned or non-http notification URLs before opening anything.
  if (config.profile !== 'cluster') checkNotifySettings(config.hooks.notifyUrls, config.hooks.notifySecret);
  const embedder = opts.embedder ?? configuredEmbedder(config);
  const others = new Map<string, Embedder>();
  // By the set's canonical text, so `a:1,b:1` and `a:0.5,b:0.5` share one embedder.
  const embedderFor = (model: string): Embedder => {
    const key = encoderSetText(parseEncoderSet(model, 'model'));
    if (key === embedder.model) return embedder;
    let other = others.get(key);
    if (other === undefined) {
      other = embedderOfSetText(config, key);
      others.set(key, other);
    }
    return other;
  };
  const untraced = await openStores<JobSpec, JobProgress>(config);
  const opened = tracing ? tracedStores(untraced) : untraced;
  const check = opts.palaceModel ?? 'serve';
  if (check !== 'reembed') {
    await checkPalaceModel(opened.drawers, embedder, check === 'worker' ? 'accept' : 'refuse').catch(async (refusal: unknown) => {
      await opened.close();
      if (!opts.embedder) await embedder.close();
      throw refusal;
    });
  }
  const stores: PalaceStores<JobSpec, JobProgress> = { ...opened, drawers: modelBoundDrawers(opened.drawers, embedder.identity) };
  // Sources registered by older versions may hold a credential in their URL: it moves out now.
  await migrateRegisteredSources({ sources: stores.sources, credentials: stores.credentials }).catch(async (e: unknown) => {
    await opened.close();
    if (!opts.embedder) await embedder.close();
    throw e;
  });
  // Cluster jobs run as Temporal workflows on `mempalace worker` processes (app/worker.ts builds
  // their activities); the client is loaded only then, so embedded commands never load the
  // Temporal SDK. Embedded jobs and their job-end deliveries run in this process.
  let inline: InlineNotifications | undefined;
  let jobs: JobEngine;
  if (config.profile === 'cluster') {
    jobs = await (await import('../jobs/engines/temporal/job-engine.js')).TemporalJobEngine.connect({ palace: stores.palace, jobs: stores.jobs,
      temporal: config.temporal, timeouts: { leaseMs: config.jobLeaseMs }, mineWindow: config.mineParallelBatches, traced: tracing !== undefined });
  } else {
    const notifications = new InlineNotifications(
      (event, progress) =>
        deliverJobEnd({ palace: config.palaceName, urls: config.hooks.notifyUrls, secret: config.hooks.notifySecret, logstream: stores.logstream }, event,
          progress),
      { attempts: config.hooks.notifyAttempts, backoffMs: config.hooks.notifyBackoffMs },
    );
    inline = notifications;
    const built = createJobActivities({ config, stores, embedder, embedderFor, workspace: path.join(config.palaceDir, 'workspace') });
    const activities = tracing ? tracedActivities(built) : built;
    jobs = new LocalJobEngine({ palace: stores.palace, jobs: stores.jobs, locks: stores.locks, activities, leaseMs: config.jobLeaseMs,
      mineWindow: config.mineParallelBatches, notify: (p) => notifications.publish(p) });
  }
  if (tracing) jobs = tracedJobEngine(jobs);
  const queues = config.profile === 'cluster' ? await openQueues(config) : undefined;
  const refresh = queues?.refresh ??
    new RefreshDebouncer((sourceId) => refreshRegisteredSource({ sources: stores.sources, jobs }, sourceId), config.hooks.refreshDebounceMs, log,
      config.hooks.refreshMaxWaitMs);
  const runtime: Runtime = {
    config,
    stores,
    embedder,
    jobs,
    refresh,
    log,
    notifications: queues?.notifications ?? inline!,
    drawerContext: { config, drawers: stores.drawers, embedder },
    logstreamContext: logstreamContextOf(config, stores, embedder),
    embedderFor,
    ...(queues ? { queueDepths: queues.depths } : {}),
    async close() {
      // Together: a refresh in progress waits for its mine, which closing the engine cancels.
      await Promise.all([refresh.close(), jobs.close()]);
      await queues?.close();
      await inline?.close();
      await stores.close();
      await Promise.all([...others.values()].map((other) => other.close()));
      if (!opts.embedder) await embedder.close();
      await tracing?.flush();
    },
    // `this`: a copy of the runtime with other parts (`{ ...rt, drawerContext }`) gives calls its own parts.
    forCall(call) {
      return callRuntime(this, call);
    },
  };
  return runtime;
}

/** The one logstream context of a runtime: its `mesh` object keys the mesh profile cache. */
function logstreamContextOf(config: Config, stores: PalaceStores, embedder: Embedder): LogstreamContext {
  return {
    logstream: stores.logstream,
    mesh: {
      replicaName: config.replicaName,
      syncIntervalS: config.sync.intervalS,
      locks: stores.locks,
      peers: () => stores.peers(),
      nodeFacts: async () => ({ drawerStore: true, drawers: await stores.drawers.count(), accelerator: { provider: 'CPU', embedder: embedder.model } }),
    },
  };
}

/** The cluster profile's BullMQ queues: depths, refresh requests, dead letters (their consumers run in `mempalace worker`). */
async function openQueues(config: Config) {
  const { NotificationQueue, TriggerQueue } = await import('../jobs/engines/queues/queues.js');
  const { queueNotifications, queueRefreshScheduler, queueSettings } = await import('./short-jobs.js');
  const settings = queueSettings(config);
  const queues = { trigger: new TriggerQueue(settings, config.hooks.refreshDebounceMs, config.hooks.refreshMaxWaitMs),
    notification: new NotificationQueue(settings) };
  return {
    refresh: queueRefreshScheduler(queues.trigger),
    notifications: queueNotifications(queues),
    depths: async () => Object.fromEntries(await Promise.all(Object.entries(queues).map(async ([name, q]) => [name, await q.depths()] as const))),
    close: async () => {
      await Promise.all(Object.values(queues).map((q) => q.close()));
    },
  };
}
