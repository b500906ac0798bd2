/**
 * What every entry point (CLI commands, the MCP server, the REST API, a worker) receives: the
 * configuration and the ports the composition root (app/runtime.ts) chose for the profile.
 * Declared here, beside the operations that use it, so the transports never import app/.
 */
import type { Config } from '../core/config.js';
import type { Logger } from '../core/log.js';
import type { Embedder } from '../embed/embedder.js';
import type { PalaceStores } from '../stores/ports/palace-stores.js';
import type { DrawerContext } from './context.js';
import type { JobEngine, JobProgress, JobSpec } from '../stores/ports/job-engine.js';
import type { LogstreamContext } from './logstream/logstream.js';
import type { Notifications } from './hooks/notifications.js';
import type { RefreshScheduler } from '../stores/ports/refresh-scheduler.js';
import type { Call } from './call.js';

export interface Runtime {
  config: Config;
  stores: PalaceStores<JobSpec, JobProgress>;
  embedder: Embedder;
  jobs: JobEngine;
  /** Context for the drawer operations of palace/. */
  drawerContext: DrawerContext;
  /**
   * Context for the logstream operations, one per runtime and shared by every transport (the
   * mesh profile cache is keyed by its `mesh`); uncapped: MCP adds its response cap to a view.
   */
  logstreamContext: LogstreamContext;
  /** An embedder of the named model (`embedder` itself for its own model), for `mempalace reembed`. */
  embedderFor(model: string): Embedder;
  /** Depth of each BullMQ queue by job state (cluster profile; short jobs run inline otherwise). */
  queueDepths?: () => Promise<Record<string, Record<string, number>>>;
  /** Schedules refreshes of registered sources (the trigger queue on the cluster, an in-process debounce embedded). */
  refresh: RefreshScheduler;
  /** Job-end deliveries and dead letters. */
  notifications: Notifications;
  /** The process logger (stderr). */
  log: Logger;
  /**
   * The runtime one call sees (palace/call.ts). Faces use it for every request, so what wraps the
   * ports for a caller (issue 28: per-wing grants, the audit trail) covers every tool and route.
   */
  forCall(call: Call): Runtime;
  close(): Promise<void>;
}
