/**
 * The embedded profile's JobStore: job records, progress events, manifests and plans in
 * `<palace>/jobs.sqlite3`. Survives a crash of the process that ran the job, so a restarted
 * runner can resume from the stored cursor.
 */
import type Database from 'better-sqlite3';
import type { JobRecord, JobStore, ManifestEntry } from '../ports/job-store.js';
import { openStoreSqlite } from './sqlite-open.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS jobs (
  job_id TEXT PRIMARY KEY, kind TEXT NOT NULL, lock_key TEXT NOT NULL, state TEXT NOT NULL,
  spec TEXT NOT NULL, progress TEXT NOT NULL, cursor TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS jobs_lock_state ON jobs (lock_key, state);
CREATE INDEX IF NOT EXISTS jobs_created ON jobs (created_at);
CREATE TABLE IF NOT EXISTS job_events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL, progress TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS job_events_job ON job_events (job_id, seq);
CREATE TABLE IF NOT EXISTS manifests (
  manifest_id TEXT NOT NULL, position INTEGER NOT NULL, entry TEXT NOT NULL, PRIMARY KEY (manifest_id, position));
CREATE TABLE IF NOT EXISTS blobs (key TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

/** Suffix of a manifest being written (a NUL never occurs in a job id). */
const STAGING = '\0staging';

interface JobRow {
  job_id: string;
  kind: string;
  lock_key: string;
  state: string;
  spec: string;
  progress: string;
  cursor: string | null;
  created_at: string;
  updated_at: string;
}

function toRecord<Spec, Progress>(r: JobRow): JobRecord<Spec, Progress> {
  return {
    job_id: r.job_id,
    kind: r.kind,
    lock_key: r.lock_key,
    state: r.state,
    spec: JSON.parse(r.spec) as Spec,
    progress: JSON.parse(r.progress) as Progress,
    ...(r.cursor === null ? {} : { cursor: JSON.parse(r.cursor) as unknown }),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export class SqliteJobStore<Spec = unknown, Progress = unknown> implements JobStore<Spec, Progress> {
  private readonly db: Database.Database;

  constructor(file: string) {
    this.db = openStoreSqlite(file, { busyTimeoutMs: 5_000, synchronous: 'FULL', setup: (db) => db.exec(SCHEMA) });
  }

  async create(r: JobRecord<Spec, Progress>): Promise<void> {
    this.db.prepare('INSERT INTO jobs VALUES (?,?,?,?,?,?,?,?,?)').run(r.job_id, r.kind, r.lock_key, r.state, JSON.stringify(r.spec),
      JSON.stringify(r.progress), r.cursor === undefined ? null : JSON.stringify(r.cursor), r.created_at, r.updated_at);
  }

  async update(jobId: string, state: string, progress: Progress, cursor?: unknown): Promise<void> {
    const now = new Date().toISOString();
    const p = JSON.stringify(progress);
    this.db.transaction(() => {
      if (cursor === undefined) this.db.prepare('UPDATE jobs SET state=?, progress=?, updated_at=? WHERE job_id=?').run(state, p, now, jobId);
      else this.db.prepare('UPDATE jobs SET state=?, progress=?, cursor=?, updated_at=? WHERE job_id=?').run(state, p, JSON.stringify(cursor), now, jobId);
      this.db.prepare('INSERT INTO job_events (job_id, progress) VALUES (?, ?)').run(jobId, p);
    })();
  }

  async get(jobId: string): Promise<JobRecord<Spec, Progress> | undefined> {
    const r = this.db.prepare('SELECT * FROM jobs WHERE job_id = ?').get(jobId) as JobRow | undefined;
    return r ? toRecord<Spec, Progress>(r) : undefined;
  }

  async running(lockKey: string): Promise<JobRecord<Spec, Progress> | undefined> {
    const r = this.db.prepare("SELECT * FROM jobs WHERE lock_key = ? AND state = 'running' ORDER BY created_at DESC LIMIT 1").get(lockKey) as
      | JobRow
      | undefined;
    return r ? toRecord<Spec, Progress>(r) : undefined;
  }

  async list(limit: number): Promise<JobRecord<Spec, Progress>[]> {
    return (this.db.prepare('SELECT * FROM jobs ORDER BY created_at DESC, job_id DESC LIMIT ?').all(limit) as JobRow[]).map((r) => toRecord<Spec, Progress>(r));
  }

  async events(jobId: string, afterSeq: number, limit: number): Promise<{ seq: number; progress: Progress }[]> {
    const rows = this.db.prepare('SELECT seq, progress FROM job_events WHERE job_id = ? AND seq > ? ORDER BY seq LIMIT ?').all(jobId, afterSeq, limit) as {
      seq: number;
      progress: string;
    }[];
    return rows.map((r) => ({ seq: r.seq, progress: JSON.parse(r.progress) as Progress }));
  }

  async writeManifest(manifestId: string, pages: AsyncIterable<ManifestEntry[]>): Promise<number> {
    // Pages go in under a staging id, one transaction each; one last transaction swaps them in.
    const staging = `${manifestId}${STAGING}`;
    const insert = this.db.prepare('INSERT INTO manifests (manifest_id, position, entry) VALUES (?, ?, ?)');
    const drop = this.db.prepare('DELETE FROM manifests WHERE manifest_id = ?');
    drop.run(staging);
    let position = 0;
    try {
      for await (const page of pages) {
        this.db.transaction(() => {
          for (const e of page) insert.run(staging, position++, JSON.stringify(e));
        })();
      }
    } catch (e) {
      drop.run(staging);
      throw e;
    }
    this.db.transaction(() => {
      drop.run(manifestId);
      this.db.prepare('UPDATE manifests SET manifest_id = ? WHERE manifest_id = ?').run(manifestId, staging);
    })();
    return position;
  }

  async readManifest(manifestId: string, offset: number, count: number): Promise<ManifestEntry[]> {
    const rows = this.db.prepare('SELECT entry FROM manifests WHERE manifest_id = ? AND position >= ? ORDER BY position LIMIT ?').all(manifestId, offset,
      count) as { entry: string }[];
    return rows.map((r) => JSON.parse(r.entry) as ManifestEntry);
  }

  async putBlob(key: string, value: unknown): Promise<void> {
    this.db.prepare('INSERT OR REPLACE INTO blobs (key, value) VALUES (?, ?)').run(key, JSON.stringify(value));
  }

  async getBlob(key: string): Promise<unknown> {
    const r = this.db.prepare('SELECT value FROM blobs WHERE key = ?').get(key) as { value: string } | undefined;
    return r ? (JSON.parse(r.value) as unknown) : undefined;
  }

  async dropArtifacts(prefix: string): Promise<void> {
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM manifests WHERE substr(manifest_id, 1, length(?)) = ?').run(prefix, prefix);
      this.db.prepare('DELETE FROM blobs WHERE substr(key, 1, length(?)) = ?').run(prefix, prefix);
    })();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
