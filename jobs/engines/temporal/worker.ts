/**
 * A mempalace job worker: polls the configured task queue, runs the job workflows (bundled from
 * ./workflows) and their activities with this process's stores and embedder. Concurrency limits
 * keep a worker within its cores and memory (each mine batch embeds up to a few hundred chunks).
 * On SIGINT/SIGTERM it stops polling, lets in-flight batches finish within the grace time, and
 * hands back what is still running (the activity is cancelled and retried on another worker).
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OpenTelemetryPluginOptions } from '@temporalio/interceptors-opentelemetry';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { RuntimeOptions } from '@temporalio/worker';
import { NativeConnection, Runtime, Worker, makeTelemetryFilterString } from '@temporalio/worker';
import type { JobActivities } from '../../activities.js';
import { storeUnavailable } from '../../../core/errors.js';
import type { Logger } from '../../../core/log.js';
import type { JobProgress, JobSpec } from '../../job.js';
import type { JobStore } from '../../../stores/ports/job-store.js';
import type { Locks } from '../../../stores/ports/locks.js';
import { createWorkerActivities } from './activities.js';
import { workerIdentity } from '../../workflow-types.js';

export interface JobWorkerOptions {
  temporal: { address: string; namespace: string; taskQueue: string };
  activities: JobActivities;
  locks: Locks;
  jobs: JobStore<JobSpec, JobProgress>;
  leaseMs: number;
  /** Activity attempts (scan, batch, apply) running at once on this worker; default 2. */
  maxConcurrentActivities?: number;
  /** Workflow tasks at once; default 4 (they are short: no I/O happens in them). */
  maxConcurrentWorkflowTasks?: number;
  /** How long a shutdown waits for in-flight activities before cancelling them; default 60 s. */
  shutdownGraceMs?: number;
  /** Told once a job has recorded its end (the notification queue's publisher). */
  notify?: (progress: JobProgress) => Promise<void>;
  /** A prebuilt workflow bundle (tests and benchmarks that start several workers). */
  workflowBundle?: WorkflowBundleWithSourceMap;
  /**
   * Tracing is on: the OpenTelemetry plugin adds the client, activity and workflow interceptors
   * (the workflow one goes into the bundle, so a prebuilt bundle must have been built with it) and
   * exports workflow spans through this span processor.
   */
  tracing?: Pick<OpenTelemetryPluginOptions, 'spanProcessor' | 'resource'>;
}

/** The workflow bundle entry: jobs/workflows.ts under tsx/vitest, jobs/workflows.js when compiled. */
export function workflowsPath(): string {
  const here = fileURLToPath(import.meta.url);
  return path.join(path.dirname(here), '..', '..', `workflows${path.extname(here)}`);
}

export interface JobWorker {
  worker: Worker;
  /** Run until shutdown (a signal or `shutdown()`), then close the connection. */
  run(): Promise<void>;
  shutdown(): void;
}

export async function createJobWorker(o: JobWorkerOptions): Promise<JobWorker> {
  let connection: NativeConnection;
  try {
    connection = await NativeConnection.connect({ address: o.temporal.address });
  } catch (e) {
    throw storeUnavailable('temporal', e);
  }
  try {
    const maxActivities = o.maxConcurrentActivities ?? 2;
    const plugins = o.tracing ? [new (await import('@temporalio/interceptors-opentelemetry')).OpenTelemetryPlugin(o.tracing)] : [];
    const worker = await Worker.create({
      plugins,
      connection,
      identity: workerIdentity(`${process.pid}@${os.hostname()}`, maxActivities),
      namespace: o.temporal.namespace,
      taskQueue: o.temporal.taskQueue,
      ...(o.workflowBundle ? { workflowBundle: o.workflowBundle } : { workflowsPath: workflowsPath() }),
      activities: createWorkerActivities({ activities: o.activities, locks: o.locks, jobs: o.jobs, leaseMs: o.leaseMs,
        ...(o.notify ? { notify: o.notify } : {}) }),
      maxConcurrentActivityTaskExecutions: maxActivities,
      maxConcurrentLocalActivityExecutions: Math.max(4, maxActivities * 2),
      maxConcurrentWorkflowTaskExecutions: o.maxConcurrentWorkflowTasks ?? 4,
      shutdownGraceTime: o.shutdownGraceMs ?? 60_000,
    });
    return {
      worker,
      async run() {
        try {
          await worker.run();
        } finally {
          await connection.close();
        }
      },
      shutdown: () => worker.shutdown(),
    };
  } catch (e) {
    await connection.close();
    throw e;
  }
}

type SdkLogger = NonNullable<RuntimeOptions['logger']>;
const SDK_LEVELS = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;

/**
 * The SDK's logs (worker, workflow and activity loggers, and the native core's warnings) go
 * through the process logger, so a worker writes one format to one stream. Once per process,
 * before the first worker.
 */
export function installTemporalLogging(log: Logger): void {
  const forward: SdkLogger['log'] = (level, message, meta) => log[SDK_LEVELS[level]]({ ...meta }, message);
  Runtime.install({
    logger: {
      log: forward,
      trace: (message, meta) => forward('TRACE', message, meta),
      debug: (message, meta) => forward('DEBUG', message, meta),
      info: (message, meta) => forward('INFO', message, meta),
      warn: (message, meta) => forward('WARN', message, meta),
      error: (message, meta) => forward('ERROR', message, meta),
    },
    telemetryOptions: { logging: { forward: {}, filter: makeTelemetryFilterString({ core: 'WARN' }) } },
  });
}
