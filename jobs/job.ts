/**
 * The job model's behaviour over the port's types (stores/ports/job-engine.ts): lock keys, whether
 * a spec writes, the shared wait loop and the already-running error. The types are re-exported so
 * the job kinds, the engines and the faces name the model in one place.
 */
import path from 'node:path';
import { PalaceError } from '../core/errors.js';
import { hashN } from '../core/text.js';
import type { JobProgress, JobSpec, SourceSpec } from '../stores/ports/job-engine.js';

export { JOB_KINDS, JOB_TRIGGERS, MINE_MODES } from '../stores/ports/job-engine.js';
export type { DeleteBySourceSpec, JobCounters, JobEngine, JobKind, JobProgress, JobSpec, JobState, JobSubject, MineSpec, ReembedSpec, RevertSpec, SourceSpec,
  SyncSpec } from '../stores/ports/job-engine.js';

/** A lease held on a lock key, carried by every write that must still hold it (a stale token is refused). */
export interface Fence {
  key: string;
  token: number;
  /**
   * Who holds the lease and for how long it is taken: a write that finds it lapsed with nobody
   * having replaced it takes it back (`Locks.reclaim`) instead of failing. Fences made before
   * these were carried lack them and are checked strictly.
   */
  holder?: string;
  ttlMs?: number;
}

/** The identity a source is locked and keyed by (docs/decisions.md palace 1). */
export function sourceIdentity(source: SourceSpec): string {
  return source.kind === 'dir' ? path.resolve(source.path) : source.url;
}

/**
 * One lock per (palace, source), shared by mine, sync and delete_by_source. Sync and
 * delete_by_source lock what they touch: sync its project directory or wing, delete_by_source the
 * stored source value. A re-embed locks the palace, a revert the agent whose writes it undoes.
 */
export function lockKey(palace: string, spec: JobSpec): string {
  // A re-embed touches every drawer: one lock per palace, whatever the target model.
  if (spec.kind === 'reembed') return `mempalace:${palace}:reembed`;
  // Two reverts of one agent's writes can select the same records (a session inside a time range,
  // say) and would revert them twice; reverts of different agents select disjoint records, and
  // where they meet on an item the plan's conflict rule keeps the later write.
  if (spec.kind === 'revert') return `mempalace:${palace}:revert:${hashN(spec.agent, 24)}`;
  const target = spec.kind === 'mine'
    ? sourceIdentity(spec.source)
    : spec.kind === 'sync'
    ? spec.projectDir ? path.resolve(spec.projectDir) : `wing:${spec.wing ?? '*'}`
    : spec.sourceFile;
  return `mempalace:${palace}:source:${hashN(target, 24)}`;
}

/** Whether the job writes to the palace: dry runs write nothing, so they take no lock (docs/palace-behaviour.md §4.4). */
export function specWrites(spec: JobSpec): boolean {
  switch (spec.kind) {
    case 'mine':
    case 'delete_by_source':
      return !spec.dryRun;
    case 'sync':
      return spec.apply;
    case 'reembed':
    case 'revert':
      return true;
  }
}

/**
 * The lock key a job runs under: its source's for a writing job; for a dry run, a key of its own
 * (`runId` makes it unique), since a dry run writes nothing and so conflicts with nothing.
 */
export function jobLockKey(palace: string, spec: JobSpec, runId: string): string {
  return specWrites(spec) ? lockKey(palace, spec) : `${lockKey(palace, spec)}:dry:${runId}`;
}

/**
 * The `wait` of every engine: read the job's progress every `pollMs` until it has ended or
 * `timeoutMs` has passed, telling `onProgress` of each new record.
 */
export async function waitForJob(read: () => Promise<JobProgress>, timeoutMs: number, pollMs: number,
  onProgress?: (p: JobProgress) => void): Promise<JobProgress> {
  const deadline = Date.now() + timeoutMs;
  let lastUpdate = '';
  for (;;) {
    const p = await read();
    if (p.updated_at !== lastUpdate) {
      lastUpdate = p.updated_at;
      onProgress?.(p);
    }
    if (p.state !== 'running' || Date.now() >= deadline) return p;
    await new Promise((r) => setTimeout(r, Math.min(pollMs, Math.max(1, deadline - Date.now()))));
  }
}

export function alreadyRunning(running: JobProgress): PalaceError {
  return new PalaceError('already_running', `another job is in progress on this source: ${running.job_id}`, {
    details: { job_id: running.job_id, progress: running, error_class: 'LockHeldByOtherProcess' },
  });
}

/** A job's progress without its (possibly large) final result, for lists, handles and stream frames. */
export function progressView(p: JobProgress): Omit<JobProgress, 'result'> {
  const { result: _result, ...rest } = p;
  return rest;
}
