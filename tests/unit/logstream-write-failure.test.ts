/**
 * A write SQLite refuses for a constraint (a UNIQUE index) is a non-retryable `conflict` naming
 * the store, never "sqlite is unavailable" (issue 24, I1): an outage invites retries that cannot
 * help, and hides a broken invariant. A real in-memory database raises the real error.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { writeWithBusyRetry } from '../../stores/embedded/sqlite-busy.js';
import { rejectionOf } from '../helpers/errors.js';

describe('writeWithBusyRetry', () => {
  it('reports a UNIQUE violation as a conflict, not as an unavailable store', async () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE events (origin TEXT, origin_seq INTEGER); CREATE UNIQUE INDEX u ON events(origin, origin_seq)');
    const insert = db.prepare('INSERT INTO events VALUES (?, ?)');
    await writeWithBusyRetry('sqlite', () => db.transaction(() => insert.run('r', 4)).immediate());
    const error = await rejectionOf(writeWithBusyRetry('sqlite', () => db.transaction(() => insert.run('r', 4)).immediate()));
    expect(error).toMatchObject({ code: 'conflict', store: 'sqlite', rule: 'constraint', retryable: false,
      details: { sqlite_code: 'SQLITE_CONSTRAINT_UNIQUE' } });
    expect(error.message).not.toContain('unavailable');
    db.close();
  });
});
