/**
 * What the three job workflows share, inside the workflow sandbox: activity proxies with their
 * timeouts and retry policies, the job's progress as the `progress` query answers it and as the
 * JobStore records it, the `cancel` signal, and the lease (acquire, re-acquire after a stale
 * fence, release). Deterministic: time is workflow time, I/O happens only in activities.
 */
import { ActivityCancellationType, ActivityFailure, ApplicationFailure, continueAsNew, defineQuery, defineSignal, proxyActivities, proxyLocalActivities,
  setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import type { ProgressStep } from './progress.js';
import { advanceProgress, failureFields, finishProgress, jobSubject, newJobRecord, newProgress } from './progress.js';
import type { JobProgress, JobSpec } from './job.js';
import type { Carried, Fence, JobTimeouts, WorkerActivities } from './workflow-types.js';
import { CANCEL_SIGNAL, PROGRESS_QUERY } from './workflow-types.js';

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
    // A cancelled step is waited for until its attempt answers, so the job's counts include
    // every write it made. Set explicitly: left unset, the worker sends no value and the core
    // falls back to TRY_CANCEL, which answers at once.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  });
  const lease = proxyActivities<WorkerActivities>({ startToCloseTimeout: '30 seconds', retry });
  // Job records are small writes to the JobStore from the worker that runs the workflow; as local
  // activities they add one marker to history instead of three activity events.
  const record = proxyLocalActivities<WorkerActivities>({ startToCloseTimeout: '30 seconds', retry: { ...retry, maximumAttempts: 10 } });
  return { work, lease, record };
}

type Proxies = ReturnType<typeof activitiesFor>;

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
  private readonly onCancelRequested: (() => void)[] = [];

  /** `carried`: what a run continued as new takes over (the job's start time and where it stood). */
  constructor(spec: JobSpec, readonly lockKey: string, readonly timeouts: JobTimeouts,
    carried?: { startedAt: string; step: ProgressStep; fence?: Fence; cancelled: boolean }) {
    const info = workflowInfo();
    this.jobId = info.firstExecutionRunId;
    this.workflowId = info.workflowId;
    this.acts = activitiesFor(timeouts);
    this.progress = newProgress({ jobId: this.jobId, kind: spec.kind, lockKey, subject: jobSubject(spec) }, new Date().toISOString(), carried);
    this.fence = carried?.fence;
    this.cancelRequested = carried?.cancelled ?? false;
    setHandler(progressQuery, () => this.progress);
    setHandler(cancelSignal, (jobId) => {
      if (jobId !== this.jobId || this.cancelRequested) return;
      this.cancelRequested = true;
      for (const stop of this.onCancelRequested) stop();
    });
  }

  /**
   * The run of a job: a new one registered in the JobStore, or one continued as new taking over
   * where the last stopped (`stepOf` says what its cursor has done).
   */
  static async open<Cursor>(input: { spec: JobSpec; lockKey: string; timeouts: JobTimeouts; carried?: Carried<Cursor> | undefined },
    stepOf?: (cursor: Cursor) => ProgressStep): Promise<JobRun> {
    const { carried } = input;
    const run = new JobRun(input.spec, input.lockKey, input.timeouts, carried && stepOf &&
      { startedAt: carried.startedAt, step: stepOf(carried.cursor), ...(carried.fence ? { fence: carried.fence } : {}), cancelled: carried.cancelled });
    if (!carried) await run.register(input.spec);
    return run;
  }

  /** What the next run takes over when this one continues as new at `cursor`; the lease stays held across. */
  carry<Cursor>(cursor: Cursor): Carried<Cursor> {
    return { cursor, ...(this.fence ? { fence: this.fence } : {}), startedAt: this.progress.started_at, cancelled: this.cancelRequested };
  }

  /**
   * The job's work, the lease taken first when `takeLease` (a continued run holds it already): an
   * error gives the lease back and ends the job as failed; otherwise `then` ends it (or hands over).
   */
  async leased<T>(takeLease: boolean, work: () => Promise<T>, then: (value: T) => Promise<JobProgress>): Promise<JobProgress> {
    let value: T;
    try {
      if (takeLease) await this.acquireLease();
      value = await work();
    } catch (e) {
      return this.fail(e);
    }
    return then(value);
  }

  /** Run `stop` when the job's cancel arrives (at once if it already has). */
  whenCancelled(stop: () => void): void {
    if (this.cancelRequested) stop();
    else this.onCancelRequested.push(stop);
  }

  /** First run only: make sure the JobStore has the record (the client may have written it). */
  async register(spec: JobSpec): Promise<void> {
    await this.acts.record.jobRecordCreate({ record: newJobRecord(spec, this.progress) });
  }

  /** New counters after a batch: rate and ETA since the job (not this run) started. */
  async report(step: ProgressStep): Promise<void> {
    this.progress = advanceProgress(this.progress, step, Date.now());
    try {
      await this.acts.record.jobRecordUpdate({ jobId: this.jobId, state: 'running', progress: this.progress });
    } catch {
      // The query still answers; the next batch's record carries the counters again.
    }
  }

  /** Final state, recorded before the workflow returns (retried until the JobStore takes it), the lease given back first. */
  async finish(state: 'completed' | 'cancelled' | 'failed', extra: Partial<JobProgress>): Promise<JobProgress> {
    await this.releaseLease();
    this.progress = finishProgress(this.progress, state, extra, new Date().toISOString());
    await this.acts.record.jobRecordUpdate({ jobId: this.jobId, state, progress: this.progress });
    return this.progress;
  }

  async fail(e: unknown): Promise<never> {
    const { message, errorClass } = describeFailure(e);
    await this.finish('failed', failureFields(message, errorClass));
    throw ApplicationFailure.create({ message, type: errorClass ?? 'internal', nonRetryable: true });
  }

  /**
   * Take the lease. The workflow id already keeps other workflows off this key, so a lease held by
   * someone else is a dead holder's (or a non-Temporal writer's): wait for it to expire, then give up.
   */
  async acquireLease(): Promise<Fence> {
    // Batches in flight that all found the fence stale share one acquisition.
    this.acquiring ??= this.acquireOnce().finally(() => {
      this.acquiring = undefined;
    });
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
    for (let attempt = 0;; attempt++) {
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

/** How a run of a cursor-driven orchestration ends: done, stopped by a cancel, or handing over to a run continued as new. */
interface CursorOutcome<Cursor> {
  status: 'completed' | 'cancelled' | 'handover';
  cursor: Cursor;
}

/** What a cursor-driven orchestration is told by its workflow. */
export interface CursorHooks<Cursor> {
  progress(cursor: Cursor): Promise<void>;
  cancelRequested(): boolean;
  handOverRequested(): boolean;
}

/**
 * The workflow of a job whose orchestration carries a cursor (re-embed, revert): the lease taken
 * by its first run, progress reported at every cursor, the run continued as new when the server
 * suggests it (history stays small), and the job ended with `resultOf`'s result.
 */
export async function cursorWorkflow<Cursor, Outcome extends CursorOutcome<Cursor>,
  Input extends { spec: JobSpec; lockKey: string; timeouts: JobTimeouts; carried?: Carried<Cursor> | undefined }>(
  input: Input,
  stepOf: (cursor: Cursor) => ProgressStep,
  orchestrate: (run: JobRun, hooks: CursorHooks<Cursor>, start: Cursor | undefined) => Promise<Outcome>,
  resultOf: (outcome: Outcome) => Record<string, unknown>,
): Promise<JobProgress> {
  const run = await JobRun.open(input, stepOf);
  return run.leased(!run.fence, () =>
    orchestrate(run, {
      progress: (cursor) => run.report(stepOf(cursor)),
      cancelRequested: () => run.cancelRequested,
      handOverRequested: () => workflowInfo().continueAsNewSuggested,
    }, input.carried?.cursor), (outcome) =>
    outcome.status === 'handover'
      ? continueAsNew<(next: Input) => Promise<JobProgress>>({ ...input, carried: run.carry(outcome.cursor) })
      : run.finish(outcome.status as 'completed' | 'cancelled', { result: resultOf(outcome) }));
}
