/**
 * What the three job workflows share, inside the workflow sandbox: activity proxies with their
 * timeouts and retry policies, the job's progress as the `progress` query answers it and as the
 * JobStore records it, the `cancel` signal, and the lease (acquire, re-acquire after a stale
 * fence, release). Deterministic: time is workflow time, I/O happens only in activities.
 */
import {
  ActivityFailure, ApplicationFailure, defineQuery, defineSignal, proxyActivities, proxyLocalActivities, setHandler, sleep, workflowInfo,
} from '@temporalio/workflow';
import type { JobCounters, JobKind, JobProgress } from '../../palace/jobs.js';
import type { Fence, JobTimeouts, WorkerActivities } from './types.js';
import { CANCEL_SIGNAL, PROGRESS_QUERY } from './types.js';

export const progressQuery = defineQuery<JobProgress>(PROGRESS_QUERY);
/** Carries the job id so a late signal can never stop a newer job that reused the workflow id. */
export const cancelSignal = defineSignal<[jobId: string]>(CANCEL_SIGNAL);

export function activitiesFor(t: JobTimeouts) {
  // No nonRetryableErrorTypes: a failure is non-retryable by its own flag, set from the error's
  // `retryable` where the activity throws it (activities.ts), never by its code.
  const retry = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 20 };
  const work = proxyActivities<WorkerActivities>({
    startToCloseTimeout: t.activityTimeoutMs,
    heartbeatTimeout: t.heartbeatTimeoutMs,
    retry,
  });
  const lease = proxyActivities<WorkerActivities>({ startToCloseTimeout: '30 seconds', retry });
  // Job records are small writes to the JobStore from the worker that runs the workflow; as local
  // activities they add one marker to history instead of three activity events.
  const record = proxyLocalActivities<WorkerActivities>({ startToCloseTimeout: '30 seconds', retry: { ...retry, maximumAttempts: 10 } });
  return { work, lease, record };
}

type Proxies = ReturnType<typeof activitiesFor>;

function zeroCounters(): JobCounters {
  return { files_total: 0, files_seen: 0, files_skipped: 0, files_mined: 0, drawers_written: 0, errors: 0 };
}

/** Error message and class of a failure as the job result reports it (PalaceError code when known). */
export function describeFailure(e: unknown): { message: string; errorClass?: string } {
  let cause: unknown = e;
  while (cause instanceof ActivityFailure && cause.cause) cause = cause.cause;
  if (cause instanceof ApplicationFailure) return { message: cause.message, ...(cause.type ? { errorClass: cause.type } : {}) };
  return { message: cause instanceof Error ? cause.message : String(cause) };
}

function isStaleLease(e: unknown): boolean {
  return e instanceof ActivityFailure && e.cause instanceof ApplicationFailure && e.cause.type === 'stale_lease';
}

/**
 * One job's workflow-side state: progress (query + JobStore), cancellation, lease. Construct it
 * at the top of a workflow function: it registers the query and signal handlers.
 */
export class JobRun {
  readonly jobId: string;
  readonly workflowId: string;
  readonly acts: Proxies;
  progress: JobProgress;
  cancelRequested = false;
  fence: Fence | undefined;
  private acquiring: Promise<Fence> | undefined;

  constructor(kind: JobKind, readonly lockKey: string, readonly timeouts: JobTimeouts, carried?: { progress?: JobProgress; fence?: Fence; cancelled?: boolean }) {
    const info = workflowInfo();
    this.jobId = info.firstExecutionRunId;
    this.workflowId = info.workflowId;
    this.acts = activitiesFor(timeouts);
    const now = new Date().toISOString();
    this.progress = carried?.progress ?? {
      job_id: this.jobId, kind, lock_key: lockKey, state: 'running', started_at: now, updated_at: now,
      rate: 0, eta_s: null, recent_errors: [], ...zeroCounters(),
    };
    this.fence = carried?.fence;
    this.cancelRequested = carried?.cancelled ?? false;
    setHandler(progressQuery, () => this.progress);
    setHandler(cancelSignal, (jobId) => {
      if (jobId === this.jobId) this.cancelRequested = true;
    });
  }

  /** First run only: make sure the JobStore has the record (the client may have written it). */
  async register(spec: Record<string, unknown>): Promise<void> {
    const p = this.progress;
    await this.acts.record.jobRecordCreate({
      record: { job_id: this.jobId, kind: p.kind, lock_key: this.lockKey, state: 'running', spec, progress: p as unknown as Record<string, unknown>, created_at: p.started_at, updated_at: p.updated_at },
    });
  }

  /** New counters after a batch: rate and ETA since the job (not this run) started. */
  async report(counters: JobCounters, extra: { recentErrors: JobProgress['recent_errors']; lastFile?: string }): Promise<void> {
    const elapsed = Math.max(0.001, (Date.now() - Date.parse(this.progress.started_at)) / 1000);
    const rate = counters.files_seen / elapsed;
    this.progress = {
      ...this.progress, ...counters, state: 'running', updated_at: new Date().toISOString(),
      rate: Math.round(rate * 100) / 100,
      eta_s: rate > 0 ? Math.round((counters.files_total - counters.files_seen) / rate) : null,
      recent_errors: extra.recentErrors,
      ...(extra.lastFile === undefined ? {} : { last_file: extra.lastFile }),
    };
    try {
      await this.acts.record.jobRecordUpdate({ jobId: this.jobId, state: 'running', progress: this.progress });
    } catch {
      // The query still answers; the next batch's record carries the counters again.
    }
  }

  /** Final state, recorded before the workflow returns (retried until the JobStore takes it). */
  async finish(state: 'completed' | 'cancelled' | 'failed', extra: Partial<JobProgress>): Promise<JobProgress> {
    const now = new Date().toISOString();
    this.progress = { ...this.progress, ...extra, state, updated_at: now, finished_at: now, eta_s: 0 };
    await this.acts.record.jobRecordUpdate({ jobId: this.jobId, state, progress: this.progress });
    return this.progress;
  }

  async fail(e: unknown): Promise<never> {
    const { message, errorClass } = describeFailure(e);
    await this.finish('failed', { error: message, result: { success: false, error: message, ...(errorClass ? { error_class: errorClass } : {}) } });
    throw ApplicationFailure.create({ message, type: errorClass ?? 'internal', nonRetryable: true });
  }

  /**
   * Take the lease. The workflow id already keeps other workflows off this key, so a lease held by
   * someone else is a dead holder's (or a non-Temporal writer's): wait for it to expire, then give up.
   */
  async acquireLease(): Promise<Fence> {
    // Batches in flight that all found the fence stale share one acquisition.
    this.acquiring ??= this.acquireOnce().finally(() => { this.acquiring = undefined; });
    return this.acquiring;
  }

  private async acquireOnce(): Promise<Fence> {
    const deadline = Date.now() + this.timeouts.leaseMs + 5_000;
    for (;;) {
      const fence = await this.acts.lease.leaseAcquire({ key: this.lockKey, workflowId: this.workflowId, ttlMs: this.timeouts.leaseMs });
      if (fence) {
        this.fence = fence;
        return fence;
      }
      if (Date.now() >= deadline) {
        throw ApplicationFailure.create({ message: `another holder keeps the lease on ${this.lockKey}`, type: 'already_running', nonRetryable: true });
      }
      await sleep(1_000);
    }
  }

  /**
   * Run a write that carries the fence. A stale fence (the lease expired while no worker ran
   * this job) is replaced by a new lease and the write retried once per new token; a write that
   * failed on a token another write has already replaced just retries with the new one.
   */
  async fenced<T>(call: (fence: Fence) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const fence = this.fence ?? (await this.acquireLease());
      try {
        return await call(fence);
      } catch (e) {
        if (attempt >= 3 || !isStaleLease(e)) throw e;
        if (this.fence?.token === fence.token) this.fence = undefined;
      }
    }
  }

  async releaseLease(): Promise<void> {
    if (!this.fence) return;
    const fence = this.fence;
    this.fence = undefined;
    try {
      await this.acts.lease.leaseRelease({ fence, workflowId: this.workflowId });
    } catch {
      // The lease expires on its own; nothing else can be done from here.
    }
  }
}
