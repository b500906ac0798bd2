/**
 * Long-running tools (docs/decisions.md "Long-running tools"): start a job through the JobEngine, wait a
 * bounded time while relaying progress, then return the finished result or a `running` handle.
 * A second call for the same source while the job runs gets the already-running error carrying
 * the same job id and the current progress.
 */
import { isPalaceError } from '../core/errors.js';
import type { OperationCall } from '../palace/operation-call.js';
import type { JobEngine, JobProgress, JobSpec } from './job.js';
import { progressView } from './job.js';

const OUTPUT_TAIL = 4000;

/** The miner's summary is capped to its last 4000 characters, never silently (docs/tools.md §3.4). */
function capOutput(result: Record<string, unknown>): Record<string, unknown> {
  const output = result.output;
  if (typeof output !== 'string') return result;
  const points = [...output];
  if (points.length <= OUTPUT_TAIL) return result;
  return { ...result, output: points.slice(-OUTPUT_TAIL).join(''), output_truncated: true };
}

/**
 * Wait for the job while the request is attached to it. A cancelled request (MCP
 * `notifications/cancelled`, or an HTTP client that hung up) cancels the job through the
 * JobEngine: it ends `cancelled`, releases its lease and keeps what it wrote. Once the call has
 * returned the job id the job is the caller's to cancel, and nothing here touches it.
 */
async function waitOrCancel(jobs: JobEngine, call: OperationCall, jobId: string, waitMs: number): Promise<JobProgress> {
  const { signal } = call;
  if (signal.aborted) return jobs.cancel(jobId);
  let onAbort!: () => void;
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const outcome = await Promise.race([jobs.wait(jobId, waitMs, call.onJobProgress), aborted]);
    if (outcome === 'aborted') return await jobs.cancel(jobId);
    // The last state reaches the client before the result, even when the engine's own updates
    // skipped it (a job finishing between two polls).
    call.onJobProgress?.(outcome);
    return outcome;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** What a job operation works with: the engine, the call it waits for, and how long it waits. */
export interface JobCallContext {
  jobs: JobEngine;
  call: OperationCall;
  waitMs: number;
}

/** Starts the job and waits a bounded time: its result, a `running` handle, or a tool-level failure (busy, failed, cancelled). */
export async function runJob(ctx: JobCallContext, spec: JobSpec, busyMessage: string): Promise<Record<string, unknown>> {
  const { jobs } = ctx;
  let started: JobProgress;
  try {
    started = await jobs.start(spec);
  } catch (e) {
    if (isPalaceError(e) && e.code === 'already_running') {
      const jobId = e.details?.job_id;
      const progress = typeof jobId === 'string' ? progressView(await jobs.progress(jobId)) : undefined;
      return {
        success: false,
        error: `${busyMessage}: ${e.message}`,
        error_class: 'LockHeldByOtherProcess',
        ...(typeof jobId === 'string' ? { job_id: jobId, progress } : {}),
      };
    }
    throw e;
  }
  const p = await waitOrCancel(jobs, ctx.call, started.job_id, ctx.waitMs);
  if (p.state === 'running') return { success: true, status: 'running', job_id: p.job_id, progress: progressView(p) };
  if (p.result) return { ...capOutput(p.result), job_id: p.job_id };
  return { success: false, error: p.error ?? `job ${p.state}`, error_class: p.state === 'cancelled' ? 'Interrupted' : 'JobFailed', job_id: p.job_id };
}
