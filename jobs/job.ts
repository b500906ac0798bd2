/**
 * Long-running jobs (mine, sync, delete_by_source): what they are, what progress they report,
 * and the `JobEngine` port that runs them. The Temporal client and the in-process runner both
 * implement the port; the composition root picks one, so `palace/` never imports either.
 */
import path from 'node:path';
import { PalaceError } from '../core/errors.js';
import { hashN } from '../core/text.js';
import type { RootBound, SourceSpec } from '../palace/sources/sources.js';

export const JOB_KINDS = ['mine', 'sync', 'delete_by_source', 'reembed'] as const;
export type JobKind = (typeof JOB_KINDS)[number];
export const MINE_MODES = ['projects', 'convos', 'extract'] as const;
export type MineMode = (typeof MINE_MODES)[number];
export type JobState = 'running' | 'completed' | 'failed' | 'cancelled';

export type { SourceSpec } from '../palace/sources/sources.js';

export interface MineSpec {
  kind: 'mine';
  source: SourceSpec;
  mode: MineMode;
  /** Wing override; derived from the source name when absent. */
  wing?: string | undefined;
  agent: string;
  limit: number;
  dryRun: boolean;
  extract: 'exchange' | 'general';
  respectGitignore: boolean;
  includeIgnored: string[];
  /** The submitting caller's root bounds (palace/sources/sources.ts), re-checked on the worker. */
  sourceBounds?: RootBound[] | undefined;
}

export interface SyncSpec {
  kind: 'sync';
  wing?: string | undefined;
  projectDir?: string | undefined;
  apply: boolean;
  /** Apply even when the sync guard stops it (a root that is not what was mined, a mass deletion). */
  force?: boolean | undefined;
  sourceBounds?: RootBound[] | undefined;
}

export interface DeleteBySourceSpec {
  kind: 'delete_by_source';
  sourceFile: string;
  dryRun: boolean;
  sourceBounds?: RootBound[] | undefined;
}

/** Rewrite every vector of the palace with another embedding model (palace/palace-model.ts). */
export interface ReembedSpec {
  kind: 'reembed';
  /** A model name MEMPALACE_EMBED_MODEL accepts. */
  model: string;
}

export type JobSpec = MineSpec | SyncSpec | DeleteBySourceSpec | ReembedSpec;

export interface JobCounters {
  files_total: number;
  files_seen: number;
  files_skipped: number;
  files_mined: number;
  drawers_written: number;
  errors: number;
}

/**
 * What a job works on, as an operator reads it: the source (a directory, a git URL, a project
 * directory for a sync, a stored source_file for a delete), the git ref, the wing and the mine
 * mode. Records written before these were kept lack them.
 */
export interface JobSubject {
  source?: string;
  ref?: string;
  wing?: string;
  mode?: MineMode;
}

export interface JobProgress extends JobCounters, JobSubject {
  job_id: string;
  kind: JobKind;
  lock_key: string;
  state: JobState;
  started_at: string;
  updated_at: string;
  finished_at?: string;
  /** Files per second since the start. */
  rate: number;
  /** Seconds to completion at the current rate; null when unknown. */
  eta_s: number | null;
  last_file?: string;
  recent_errors: { file: string; error: string }[];
  result?: Record<string, unknown>;
  error?: string;
}

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

export interface JobEngine {
  /** Start a job; a job already running on the same lock key is an `already_running` error carrying its id. */
  start(spec: JobSpec): Promise<JobProgress>;
  progress(jobId: string): Promise<JobProgress>;
  /** Resolve when the job ends or after `timeoutMs`, whichever is first; `onProgress` sees updates. */
  wait(jobId: string, timeoutMs: number, onProgress?: (p: JobProgress) => void): Promise<JobProgress>;
  cancel(jobId: string): Promise<JobProgress>;
  list(limit: number): Promise<JobProgress[]>;
  close(): Promise<void>;
}

/** The identity a source is locked and keyed by (docs/decisions.md palace 1). */
export function sourceIdentity(source: SourceSpec): string {
  return source.kind === 'dir' ? path.resolve(source.path) : source.url;
}

/**
 * One lock per (palace, source), shared by the three job kinds. Sync and delete_by_source lock
 * what they touch: sync its project directory or wing, delete_by_source the stored source value.
 */
export function lockKey(palace: string, spec: JobSpec): string {
  // A re-embed touches every drawer: one lock per palace, whatever the target model.
  if (spec.kind === 'reembed') return `mempalace:${palace}:reembed`;
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
