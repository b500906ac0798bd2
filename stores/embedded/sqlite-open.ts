/**
 * Opening a SQLite file the way the embedded stores share it between processes: WAL journal, a
 * busy timeout, and the durability the store asks for. A file that cannot be set up is closed
 * again, never left open half-configured.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { storeUnavailable } from '../../core/errors.js';

/** The embedded stores' name in errors and reports. */
export const SQLITE_STORE = 'sqlite';

export interface SqliteOpenOptions {
  busyTimeoutMs: number;
  /** `FULL` where an acknowledged write must survive a power cut (logstream, leases), `NORMAL` where WAL's guarantees suffice. */
  synchronous: 'FULL' | 'NORMAL';
  /** Statements run once after the pragmas (the schema). */
  setup?: (db: Database.Database) => void;
}

export function openSharedSqlite(file: string, options: SqliteOpenOptions): Database.Database {
  const db = new Database(file);
  try {
    db.pragma(`busy_timeout = ${options.busyTimeoutMs}`);
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous}`);
    options.setup?.(db);
    return db;
  } catch (e) {
    db.close();
    throw e;
  }
}

/** A store's own file, its directory created (owner only) if missing; a failure is the store being unavailable. */
export function openStoreSqlite(file: string, options: SqliteOpenOptions): Database.Database {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    return openSharedSqlite(file, options);
  } catch (e) {
    throw storeUnavailable(SQLITE_STORE, e);
  }
}

/**
 * Bring a file's schema to `migrations.length`: `migrations[v]` takes version v to v + 1, and
 * `PRAGMA user_version` records the version applied. A file of a newer build is refused rather
 * than misread.
 */
export function migrateSqlite(db: Database.Database, fileName: string, migrations: readonly string[]): void {
  const latest = migrations.length;
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > latest) throw new Error(`${fileName} has schema version ${current}, newer than this build (${latest})`);
  // A current file is opened without a write transaction, so opening never waits for a writer.
  if (current === latest) return;
  db.transaction(() => {
    // Re-read inside the write transaction: another process may have migrated meanwhile.
    const version = db.pragma('user_version', { simple: true }) as number;
    for (let v = version; v < latest; v++) db.exec(migrations[v]!);
    if (version < latest) db.pragma(`user_version = ${latest}`);
  }).immediate();
}
