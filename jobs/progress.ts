/**
 * A job's progress record from its start to its end, written once for both job engines (the
 * in-process runner and the Temporal workflows): whether a spec writes, the first record, the
 * record after a batch (rate and ETA since the job started), the final one and a failure.
 * Pure and type-only in its imports: Temporal's workflow bundle imports this file, so it must not
 * reach a Node built-in; the clock is the caller's (workflow time inside a workflow).
 */
import type { JobRecord } from '../stores/ports/job-store.js';
import type { JobCounters, JobKind, JobProgress, JobSpec, JobState, JobSubject } from './job.js';

export function emptyCounters(): JobCounters {
  return { files_total: 0, files_seen: 0, files_skipped: 0, files_mined: 0, drawers_written: 0, errors: 0 };
}

/** What the job of `spec` works on and what started it (its progress record carries both from the start). */
export function jobSubject(spec: JobSpec): JobSubject {
  switch (spec.kind) {
    case 'mine': {
      const source = spec.source.kind === 'git' ? { source: spec.source.url, ref: spec.source.ref } : { source: spec.source.path };
      return { ...source, ...(spec.wing === undefined ? {} : { wing: spec.wing }), mode: spec.mode, trigger: spec.trigger ?? 'user' };
    }
    case 'sync':
      return { ...(spec.projectDir === undefined ? {} : { source: spec.projectDir }), ...(spec.wing === undefined ? {} : { wing: spec.wing }),
        trigger: 'user' };
    case 'delete_by_source':
      return { source: spec.sourceFile, trigger: 'user' };
    case 'reembed':
      return { trigger: 'user' };
    case 'revert':
      return { agent: spec.agent, ...(spec.session === undefined ? {} : { session: spec.session }), ...(spec.since === undefined ? {} : { since: spec.since }),
        ...(spec.wing === undefined ? {} : { wing: spec.wing }), trigger: 'user' };
  }
}

/** Where a job stands after a batch: its counters and the tail of its errors. */
export interface ProgressStep {
  counters: JobCounters;
  recentErrors: JobProgress['recent_errors'];
  lastFile?: string | undefined;
}

/** The record of a job that starts now, or that a run resumes at `step` (continue-as-new). */
export function newProgress(job: { jobId: string; kind: JobKind; lockKey: string; subject?: JobSubject }, now: string,
  resumed?: { startedAt: string; step: ProgressStep }): JobProgress {
  const step = resumed?.step;
  return {
    job_id: job.jobId,
    kind: job.kind,
    lock_key: job.lockKey,
    ...job.subject,
    state: 'running',
    started_at: resumed?.startedAt ?? now,
    updated_at: now,
    rate: 0,
    eta_s: null,
    recent_errors: step?.recentErrors ?? [],
    ...(step?.counters ?? emptyCounters()),
    ...(step?.lastFile === undefined ? {} : { last_file: step.lastFile }),
  };
}

/** The record after a batch: new counters, and rate and ETA since the job (not this run) started. */
export function advanceProgress(progress: JobProgress, step: ProgressStep, nowMs: number): JobProgress {
  const c = step.counters;
  const elapsed = Math.max(0.001, (nowMs - Date.parse(progress.started_at)) / 1000);
  const rate = c.files_seen / elapsed;
  return {
    ...progress,
    ...c,
    state: 'running',
    updated_at: new Date(nowMs).toISOString(),
    rate: Math.round(rate * 100) / 100,
    eta_s: rate > 0 ? Math.round((c.files_total - c.files_seen) / rate) : null,
    recent_errors: step.recentErrors,
    ...(step.lastFile === undefined ? {} : { last_file: step.lastFile }),
  };
}

/** The final record: its state, its result or error, and nothing left to wait for. */
export function finishProgress(progress: JobProgress, state: Exclude<JobState, 'running'>, extra: Partial<JobProgress>, now: string): JobProgress {
  return { ...progress, ...extra, state, updated_at: now, finished_at: now, eta_s: 0 };
}

/** What a failed job records: the message, and the error class (a PalaceError code) when known. */
export function failureFields(message: string, errorClass?: string): Pick<JobProgress, 'error' | 'result'> {
  return { error: message, result: { success: false, error: message, ...(errorClass ? { error_class: errorClass } : {}) } };
}

/** The JobStore record of a job whose first progress record is `progress`. */
export function newJobRecord(spec: JobSpec, progress: JobProgress): JobRecord<JobSpec, JobProgress> {
  return {
    job_id: progress.job_id,
    kind: spec.kind,
    lock_key: progress.lock_key,
    state: progress.state,
    spec,
    progress,
    created_at: progress.started_at,
    updated_at: progress.updated_at,
  };
}
