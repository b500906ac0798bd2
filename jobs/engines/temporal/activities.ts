/**
 * The job activities as a Temporal worker runs them: the shared implementations (jobs/activities.ts)
 * wrapped so that each attempt heartbeats, renews the lease of the fence it carries (takes it
 * back when renewals came late and nobody replaced it, refuses to start on a stale one), stops
 * its step when Temporal cancels it (a cancelled job, a timed-out attempt, worker shutdown) and
 * reports PalaceErrors as typed ApplicationFailures, non-retryable exactly when the error is not
 * `retryable` (the retry policies list no error types, so this is the only place an activity's
 * retry is decided). Plus the lease and job-record activities the workflows call.
 */
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { ErrorKind } from '../../../core/errors.js';
import { PalaceError, isPalaceError } from '../../../core/errors.js';
import type { JobActivities } from '../../activities.js';
import type { JobProgress, JobSpec } from '../../job.js';
import type { JobStore } from '../../../stores/ports/job-store.js';
import type { Locks } from '../../../stores/ports/locks.js';
import type { Fence, WorkerActivities } from '../../workflow-types.js';
import { leaseHolder } from '../../workflow-types.js';

export interface WorkerActivityDeps {
  activities: JobActivities;
  locks: Locks;
  jobs: JobStore<JobSpec, JobProgress>;
  /** Lease length the workflows ask for; renewals happen at a third of it. */
  leaseMs: number;
  /** Told once a job has recorded its end (the notification queue's publisher). */
  notify?: (progress: JobProgress) => Promise<void>;
}

/** Temporal's `nonRetryable` for an activity that failed with this error: set exactly when no retry can help. */
export function temporalNonRetryable({ retryable }: ErrorKind): boolean {
  return !retryable;
}

/** How a failure leaves an activity: typed by PalaceError code, non-retryable when no retry can help. */
export function toFailure(e: unknown): unknown {
  if (e instanceof ApplicationFailure || e instanceof CancelledFailure) return e;
  if (isPalaceError(e)) {
    return ApplicationFailure.create({
      message: e.message,
      type: e.code,
      nonRetryable: temporalNonRetryable(e),
      cause: e,
      details: [{ field: e.field ?? null, rule: e.rule ?? null, store: e.store ?? null }],
    });
  }
  return e;
}

function staleLease(fence: Fence): unknown {
  return toFailure(new PalaceError('stale_lease', `lease token ${fence.token} for ${fence.key} is no longer held`));
}

type Step<I, O> = (input: I, signal?: AbortSignal) => Promise<O>;

/** How long a cancelled attempt waits for its step to stop: one file or one embedding run is far less. */
const STEP_STOP_GRACE_MS = 10_000;

/** `work`'s value if it fulfils within `ms`; undefined if it rejects or takes longer. */
async function settledWithin<O>(work: Promise<O>, ms: number): Promise<{ value: O } | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([work.then((value) => ({ value }), () => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}

export function createWorkerActivities(deps: WorkerActivityDeps): WorkerActivities {
  const { locks, jobs, leaseMs } = deps;

  /** Keep `fence` held for `holder`: renewed, or taken back after renewals came late and nobody replaced it. */
  async function holdLease(ctx: Context, fence: Fence, holder: string): Promise<boolean> {
    if (await locks.renew(fence.key, holder, fence.token, leaseMs)) return true;
    if (!(await locks.reclaim(fence.key, holder, fence.token, leaseMs))) return false;
    ctx.log.warn(`lease ${fence.key} lapsed (renewals came late) and was taken back under token ${fence.token}`);
    return true;
  }

  function guarded<I extends object, O>(name: string, step: Step<I, O>): Step<I, O> {
    return async (input) => {
      const ctx = Context.current();
      const holder = leaseHolder(ctx.info.workflowExecution?.workflowId ?? ctx.info.activityId);
      const fence = (input as { fence?: Fence }).fence;
      if (fence && !(await holdLease(ctx, fence, holder).catch((e: unknown) => {
        throw toFailure(e);
      }))) throw staleLease(fence);
      const startedMs = Date.now();
      const everyMs = Math.max(500, Math.min(ctx.info.heartbeatTimeoutMs ?? leaseMs, leaseMs) / 3);
      let leaseLost = false;
      const beat = setInterval(() => {
        ctx.heartbeat({ step: name, elapsed_ms: Date.now() - startedMs, offset: (input as { offset?: number }).offset ?? null });
        if (fence)
          holdLease(ctx, fence, holder).then((held) => {
            if (!held) leaseLost = true;
          }, () => undefined);
      }, everyMs);
      const work = step(input, ctx.cancellationSignal);
      try {
        return await Promise.race([work, ctx.cancelled]);
      } catch (e) {
        // Cancelled: the step stops at its next check of the signal (between files, between
        // embedding runs, before it writes). The attempt answers once it has: with the step's
        // result when it finished anyway (its writes are done, so the job counts them), else as
        // cancelled. A step that does not stop in time is left behind (its writes are fenced
        // and idempotent).
        if (!ctx.cancellationSignal.aborted) throw toFailure(e);
        const finished = await settledWithin(work, STEP_STOP_GRACE_MS);
        if (finished) return finished.value;
        throw await ctx.cancelled.catch((cancelled: unknown) => cancelled);
      } finally {
        clearInterval(beat);
        if (leaseLost) ctx.log.warn(`${name}: lease ${fence?.key} was lost during the attempt`);
      }
    };
  }

  const a = deps.activities;
  return {
    scanSource: guarded('scanSource', a.scanSource),
    mineBatch: guarded('mineBatch', a.mineBatch),
    finishMine: guarded('finishMine', a.finishMine),
    syncScan: guarded('syncScan', a.syncScan),
    syncApply: guarded('syncApply', a.syncApply),
    deleteBySourceCount: guarded('deleteBySourceCount', a.deleteBySourceCount),
    deleteBySourceApply: guarded('deleteBySourceApply', a.deleteBySourceApply),
    reembedStart: guarded('reembedStart', a.reembedStart),
    reembedPage: guarded('reembedPage', a.reembedPage),
    reembedFinish: guarded('reembedFinish', a.reembedFinish),
    revertStart: guarded('revertStart', a.revertStart),
    revertBatch: guarded('revertBatch', a.revertBatch),
    revertFinish: guarded('revertFinish', a.revertFinish),

    async leaseAcquire({ key, workflowId, ttlMs }) {
      try {
        const holder = leaseHolder(workflowId);
        const lease = await locks.acquire(key, holder, ttlMs);
        return lease ? { key, token: lease.token, holder, ttlMs } : null;
      } catch (e) {
        throw toFailure(e);
      }
    },
    async leaseRelease({ fence, workflowId }) {
      try {
        await locks.release(fence.key, leaseHolder(workflowId), fence.token);
      } catch (e) {
        throw toFailure(e);
      }
    },
    async jobRecordCreate({ record }) {
      try {
        await jobs.create(record);
      } catch (e) {
        if (isPalaceError(e) && e.code === 'already_exists') return;
        throw toFailure(e);
      }
    },
    async jobRecordUpdate({ jobId, state, progress }) {
      try {
        await jobs.update(jobId, state, progress);
        // A finished job's manifest and blobs are no longer needed.
        if (state !== 'running') await jobs.dropArtifacts(`${jobId}:`);
      } catch (e) {
        throw toFailure(e);
      }
      if (state !== 'running' && deps.notify) {
        // The end is recorded; a lost notification must not fail the job.
        await deps.notify(progress).catch((e: unknown) =>
          Context.current().log.warn(`job ${jobId}: notification not published: ${e instanceof Error ? e.message : String(e)}`)
        );
      }
    },
  };
}
