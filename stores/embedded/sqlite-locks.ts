/**
 * Leases with fencing tokens for the embedded profile: `<palaceDir>/locks.sqlite3`. Every
 * operation is one `BEGIN IMMEDIATE` transaction, so processes sharing the palace see one
 * consistent owner per key. Tokens come from a per-key counter kept apart from the lease row,
 * so releasing or expiring a lease never lets a token be handed out twice.
 */
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { storeUnavailable } from '../../core/errors.js';
import { checkLeaseToken, leaseArgs } from '../shared/lease-rules.js';
import type { LeaseInfo, Locks } from '../ports/locks.js';
import { writeWithBusyRetry } from './sqlite-busy.js';
import { openSharedSqlite, SQLITE_STORE } from './sqlite-open.js';

export const LOCKS_FILE = 'locks.sqlite3';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS leases (
  key TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  token INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS lease_tokens (
  key TEXT PRIMARY KEY,
  last_token INTEGER NOT NULL
);
`;

interface LeaseRow {
  holder: string;
  token: number;
  expires_at_ms: number;
}

export class SqliteLocks implements Locks {
  readonly storeName = SQLITE_STORE;
  private readonly db: Database.Database;

  private constructor(readonly file: string) {
    this.db = openSharedSqlite(file, { busyTimeoutMs: 10_000, synchronous: 'FULL', setup: (db) => db.exec(SCHEMA) });
  }

  static async open(palaceDir: string): Promise<SqliteLocks> {
    try {
      fs.mkdirSync(palaceDir, { recursive: true, mode: 0o700 });
    } catch (e) {
      throw storeUnavailable(SQLITE_STORE, e);
    }
    // Several processes opening a new file at once can find it locked while one of them switches
    // it to WAL; like writes, the open is retried (nothing was written by a refused attempt).
    return writeWithBusyRetry(SQLITE_STORE, () => new SqliteLocks(path.join(palaceDir, LOCKS_FILE)));
  }

  private write<T>(fn: () => T): Promise<T> {
    return writeWithBusyRetry(SQLITE_STORE, () => this.db.transaction(fn).immediate());
  }

  private lease(key: string): LeaseRow | undefined {
    return this.db.prepare('SELECT holder, token, expires_at_ms FROM leases WHERE key = ?').get(key) as LeaseRow | undefined;
  }

  async acquire(key: string, holder: string, ttlMs: number): Promise<{ token: number } | null> {
    leaseArgs.acquire(key, holder, ttlMs);
    return this.write(() => {
      const now = Date.now();
      const current = this.lease(key);
      if (current && current.expires_at_ms > now) return null;
      const last = this.db.prepare('SELECT last_token FROM lease_tokens WHERE key = ?').get(key) as { last_token: number } | undefined;
      const token = (last?.last_token ?? 0) + 1;
      this.db.prepare('INSERT INTO lease_tokens (key, last_token) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET last_token = excluded.last_token').run(key,
        token);
      this.db.prepare(
        'INSERT INTO leases (key, holder, token, expires_at_ms) VALUES (?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET holder = excluded.holder, token = excluded.token, expires_at_ms = excluded.expires_at_ms',
      ).run(key, holder, token, now + ttlMs);
      return { token };
    });
  }

  async renew(key: string, holder: string, token: number, ttlMs: number): Promise<boolean> {
    leaseArgs.renew(key, holder, token, ttlMs);
    return this.write(() => {
      const now = Date.now();
      const changed =
        this.db.prepare('UPDATE leases SET expires_at_ms = ? WHERE key = ? AND holder = ? AND token = ? AND expires_at_ms > ?').run(now + ttlMs, key, holder,
          token, now).changes;
      return changed === 1;
    });
  }

  async reclaim(key: string, holder: string, token: number, ttlMs: number): Promise<boolean> {
    leaseArgs.reclaim(key, holder, token, ttlMs);
    // The row outlives its expiry until a release deletes it or an acquire overwrites it with the
    // next token, so a row still carrying this holder and token is held or lapsed unreplaced.
    return this.write(() =>
      this.db.prepare('UPDATE leases SET expires_at_ms = ? WHERE key = ? AND holder = ? AND token = ?').run(Date.now() + ttlMs, key, holder, token).changes ===
        1
    );
  }

  async release(key: string, holder: string, token: number): Promise<boolean> {
    leaseArgs.release(key, holder, token);
    return this.write(() => {
      const current = this.lease(key);
      if (!current || current.holder !== holder || current.token !== token) return false;
      this.db.prepare('DELETE FROM leases WHERE key = ? AND token = ?').run(key, token);
      return current.expires_at_ms > Date.now();
    });
  }

  async check(key: string, token: number): Promise<void> {
    return checkLeaseToken(key, token, (k) => this.holder(k));
  }

  async holder(key: string): Promise<LeaseInfo | null> {
    leaseArgs.key(key);
    try {
      const row = this.lease(key);
      if (!row || row.expires_at_ms <= Date.now()) return null;
      return { holder: row.holder, token: row.token, expiresAtMs: row.expires_at_ms };
    } catch (e) {
      throw storeUnavailable(SQLITE_STORE, e);
    }
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

export function openSqliteLocks(palaceDir: string): Promise<SqliteLocks> {
  return SqliteLocks.open(palaceDir);
}
