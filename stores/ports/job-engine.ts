/**
 * The `JobEngine` port and the job model it speaks: what a long-running job (mine, sync,
 * delete_by_source, reembed, revert) is asked to do, and the progress it reports. The Temporal client, the
 * BullMQ queues and the in-process runner implement it; the composition root picks one, so palace/
 * starts and watches jobs through this port without importing jobs/.
 */

export const JOB_KINDS = ['mine', 'sync', 'delete_by_source', 'reembed', 'revert'] as const;
export type JobKind = (typeof JOB_KINDS)[number];
export const MINE_MODES = ['projects', 'convos', 'extract'] as const;
export type MineMode = (typeof MINE_MODES)[number];
export type JobState = 'running' | 'completed' | 'failed' | 'cancelled';
/**
 * What started a job: a person or agent asking for it (CLI, REST, MCP), a push webhook refreshing
 * a registered source, or a refresh of a registered source asked for by its id.
 */
export const JOB_TRIGGERS = ['user', 'webhook', 'refresh'] as const;
export type JobTrigger = (typeof JOB_TRIGGERS)[number];

/** Where a mine reads from: a directory the worker can see, or a git repository at a ref. */
export type SourceSpec = { kind: 'dir'; path: string } | { kind: 'git'; url: string; ref: string };

/** Rules a path may break, one per kind of bound. */
export type BoundRule = 'allowed_roots' | 'token_roots' | 'client_roots' | 'local_sources_disabled';

/** One set of directories a local source must lie in (inside any one of them). */
export interface RootBound {
  rule: BoundRule;
  roots: string[];
}

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
  /** The submitting caller's root bounds (palace/sources.ts), re-checked on the worker. */
  sourceBounds?: RootBound[] | undefined;
  /** What started it; absent: a user. */
  trigger?: JobTrigger | undefined;
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

/** Rewrite every vector of the palace with another embedding model (palace/drawers/palace-model.ts). */
export interface ReembedSpec {
  kind: 'reembed';
  /** A model name, or an encoder set's canonical text (core/encoder-set.ts `encoderSetText`). */
  model: string;
}

/** Who asks for a revert, as the audit records it writes name them (the job's id is their request id). */
export interface RevertCaller {
  identity: string;
  transport: string;
  action: string;
  session?: string | undefined;
}

/** Undo one agent's writes, newest first, from the before-states of the audit trail (palace/audit/revert.ts). */
export interface RevertSpec {
  kind: 'revert';
  /** The revert's id: the audit records of an earlier run with this id are its checkpoint. */
  revertId: string;
  agent: string;
  session?: string | undefined;
  /** Only writes at or after this instant (ISO 8601, as the trail stores it). */
  since?: string | undefined;
  /** Only writes that touched this wing. */
  wing?: string | undefined;
  by: RevertCaller;
}

export type JobSpec = MineSpec | SyncSpec | DeleteBySourceSpec | ReembedSpec | RevertSpec;

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
 * mode, the agent, session and instant whose writes a revert undoes, and what started it.
 * Records written before these were kept lack them.
 */
export interface JobSubject {
  source?: string;
  ref?: string;
  wing?: string;
  mode?: MineMode;
  agent?: string;
  session?: string;
  since?: string;
  trigger?: JobTrigger;
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
