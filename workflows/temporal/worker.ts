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
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { JobActivities } from '../../activities/index.js';
import { createJobActivities } from '../../activities/index.js';
import type { Config } from '../../core/config.js';
import { storeUnavailable } from '../../core/errors.js';
import type { Embedder } from '../../embed/embedder.js';
import { checkNotifySettings } from '../../activities/notify.js';
import type { JobEngine, JobProgress, JobSpec } from '../../palace/jobs.js';
import type { PalaceStores } from '../../stores/open.js';
import { NotificationQueue } from '../queues/queues.js';
import { notificationQueueSettings, startShortJobWorkers } from '../queues/short-jobs.js';
import type { JobStore, Locks } from '../../stores/ports.js';
import { createWorkerActivities } from './activities.js';
import { workerIdentity } from './types.js';

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
}

/** The workflow bundle entry: ./workflows.ts under tsx/vitest, ./workflows.js when compiled. */
export function workflowsPath(): string {
  const here = fileURLToPath(import.meta.url);
  return path.join(path.dirname(here), `workflows${path.extname(here)}`);
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
    const worker = await Worker.create({
      connection,
      identity: workerIdentity(`${process.pid}@${os.hostname()}`, maxActivities),
      namespace: o.temporal.namespace,
      taskQueue: o.temporal.taskQueue,
      ...(o.workflowBundle ? { workflowBundle: o.workflowBundle } : { workflowsPath: workflowsPath() }),
      activities: createWorkerActivities({ activities: o.activities, locks: o.locks, jobs: o.jobs, leaseMs: o.leaseMs, ...(o.notify ? { notify: o.notify } : {}) }),
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

/**
 * `mempalace worker`: a worker over the process's stores and embedder until SIGINT/SIGTERM (the
 * SDK's runtime turns those into a graceful shutdown); job ends go to the notification queue.
 * Given the runtime's job engine, it also consumes the short-job queues (source refreshes,
 * auto-saves, job-end deliveries).
 */
export async function runJobWorker(rt: { config: Config; stores: PalaceStores; embedder: Embedder; jobs?: JobEngine; embedderFor?: (model: string) => Embedder }, limits: Pick<JobWorkerOptions, 'maxConcurrentActivities' | 'shutdownGraceMs'> = {}): Promise<void> {
  const { config, stores, embedder } = rt;
  checkNotifySettings(config.hooks.notifyUrls, config.hooks.notifySecret);
  const activities = createJobActivities({ config, stores, embedder, ...(rt.embedderFor ? { embedderFor: rt.embedderFor } : {}), workspace: path.join(config.palaceDir, 'workspace') });
  const notifications = new NotificationQueue(notificationQueueSettings(config));
  const shortJobs = rt.jobs ? startShortJobWorkers({ config, stores, embedder, jobs: rt.jobs }) : undefined;
  try {
    const worker = await createJobWorker({
      temporal: config.temporal, activities, locks: stores.locks, jobs: stores.jobs, leaseMs: config.jobLeaseMs, ...limits,
      notify: (p) => notifications.publish(p),
    });
    await worker.run();
  } finally {
    await shortJobs?.close();
    await notifications.close();
  }
}
