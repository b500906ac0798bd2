/**
 * The job store port: records, manifests and blobs of long-running jobs (the sources they
 * refresh have their own port, registered-sources.ts). Implemented by `embedded/` (SQLite) and `redis/`;
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
  close(): Promise<void>;
}
