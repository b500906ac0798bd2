/**
 * The job store port: records, manifests and blobs of long-running jobs, and the registered
 * sources they refresh. Implemented by `embedded/` (SQLite) and `redis/`;
 * tests/contract/job-store.contract.ts defines its meaning.
 */

/** One file of a scanned source, as stored in a job's manifest. */
export interface ManifestEntry {
  relativePath: string;
  absolutePath: string;
  size: number;
  mtimeMs: number;
  /** Listed only to record why it is not mined (a symlink): the reason kept in its file state. */
  skip?: { reason: string; detail: string };
}

/**
 * A job as the store keeps it. `spec`, `progress` and `cursor` are opaque JSON to adapters; the
 * job engines name their types (stores/ports/job-engine.ts `JobSpec`, `JobProgress`) as the parameters, so
 * this port needs nothing from palace/.
 */
export interface JobRecord<Spec = unknown, Progress = unknown> {
  job_id: string;
  kind: string;
  lock_key: string;
  state: string;
  spec: Spec;
  progress: Progress;
  cursor?: unknown;
  created_at: string;
  updated_at: string;
}

/** How a registered source's latest refresh went (written by the refresh handler). */
export interface SourceRefresh {
  /** What asked for it: a git push webhook, or a person/agent (CLI, REST). */
  trigger: 'webhook' | 'manual';
  requested_at: string;
  /** The mine it ran; absent while it waits for a running job on the same source. */
  job_id?: string;
  state: 'waiting' | 'running' | 'completed' | 'failed' | 'cancelled';
  finished_at?: string;
  /** Commit mined (git sources). */
  commit?: string;
  drawers_written?: number;
  error?: string;
}

/** A source the palace follows (`mempalace sources add`): refreshed by webhooks or on request. */
export interface RegisteredSource {
  source_id: string;
  kind: 'git' | 'dir';
  /** The repository URL as given, or the absolute directory. */
  location: string;
  /** Normalised repository identity that push payloads are matched on (git sources). */
  match_key?: string;
  ref?: string;
  wing?: string;
  mode: string;
  added_by: string;
  added_at: string;
  last_refresh?: SourceRefresh;
}

/** Job records with specs of type `Spec` and progress of type `Progress` (the JSON it was given back). */
export interface JobStore<Spec = unknown, Progress = unknown> {
  create(record: JobRecord<Spec, Progress>): Promise<void>;
  /** Replace the job's state, progress and cursor, and append the progress to its event list. */
  update(jobId: string, state: string, progress: Progress, cursor?: unknown): Promise<void>;
  get(jobId: string): Promise<JobRecord<Spec, Progress> | undefined>;
  /** The running job holding `lockKey`, if any. */
  running(lockKey: string): Promise<JobRecord<Spec, Progress> | undefined>;
  /** Newest first. */
  list(limit: number): Promise<JobRecord<Spec, Progress>[]>;
  /** Progress snapshots of a job with `seq` greater than `afterSeq`, oldest first. */
  events(jobId: string, afterSeq: number, limit: number): Promise<{ seq: number; progress: Progress }[]>;
  /**
   * Store a manifest page by page as `pages` yields them (so a scan of any size holds one page
   * in memory), replacing any earlier one under the same id once the last page is in: readers
   * see the old manifest or the whole new one, never a part, and a write that fails midway
   * leaves the old one. Returns the number of entries stored.
   */
  writeManifest(manifestId: string, pages: AsyncIterable<ManifestEntry[]>): Promise<number>;
  readManifest(manifestId: string, offset: number, count: number): Promise<ManifestEntry[]>;
  putBlob(key: string, value: unknown): Promise<void>;
  getBlob(key: string): Promise<unknown>;
  /** Drop manifests and blobs of a finished job. */
  dropArtifacts(prefix: string): Promise<void>;
  /** Add or replace a registered source (its `last_refresh` is kept when the new record has none). */
  putSource(source: RegisteredSource): Promise<void>;
  getSource(sourceId: string): Promise<RegisteredSource | undefined>;
  /** Every registered source, ordered by source id. */
  listSources(): Promise<RegisteredSource[]>;
  /** False when no such source was registered. */
  removeSource(sourceId: string): Promise<boolean>;
  /** Record a source's latest refresh; false (nothing written) when the source is not registered. */
  setSourceRefresh(sourceId: string, refresh: SourceRefresh): Promise<boolean>;
  close(): Promise<void>;
}
