/** Opening older logstream files (docs/logstream.md §10.3) and the replica identity file (docs/logstream.md §8.1). */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventAppend, eventList } from '../../palace/logstream/logstream.js';
import { loadOrMintReplicaId } from '../../stores/embedded/logstream/replica.js';
import { openSqliteLogstream } from '../../stores/embedded/logstream/sqlite-logstream.js';
import { makeTempDir, removeDir } from '../helpers/tmp.js';

let dir: string;
beforeEach(() => {
  dir = makeTempDir('mp-logstream-mig-');
});
afterEach(() => {
  removeDir(dir);
});

describe('migration of a pre-replication logstream file', () => {
  it('adds columns, backfills origin and hlc in rowid order, and keeps appending after it', async () => {
    const db = new Database(path.join(dir, 'logstream.sqlite3'));
    db.exec(`CREATE TABLE events (id TEXT PRIMARY KEY, type TEXT NOT NULL, stream TEXT NOT NULL, room TEXT NOT NULL, from_agent TEXT NOT NULL,
      to_agent TEXT, correlation_id TEXT, branch TEXT, base_commit TEXT, status TEXT, body TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL, metadata_json TEXT NOT NULL DEFAULT '{}');
      CREATE TABLE artifacts (id TEXT PRIMARY KEY, kind TEXT NOT NULL, sha256 TEXT NOT NULL, size_bytes INTEGER NOT NULL, content TEXT NOT NULL, created_by TEXT NOT NULL, created_at TEXT NOT NULL, metadata_json TEXT NOT NULL DEFAULT '{}');
      CREATE TABLE event_artifacts (event_id TEXT NOT NULL, artifact_id TEXT NOT NULL, PRIMARY KEY (event_id, artifact_id));`);
    const insert = db.prepare('INSERT INTO events (id, type, stream, room, from_agent, body, created_at, metadata_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    insert.run('evt_20250101T000002_aaaaaaaaaaaa', 'task.request', 's', 'r', 'old', 'first', '2025-01-01T00:00:02Z', '{"a": 1}');
    insert.run('evt_20250101T000001_bbbbbbbbbbbb', 'task.reply', 's', 'r', 'old', 'second', '2025-01-01T00:00:01Z', 'not json');
    db.prepare("INSERT INTO artifacts VALUES ('art_20250101T000000_cccccccccccc', 'note', 'h', 1, 'x', 'old', '2025-01-01T00:00:00Z', '{}')").run();
    db.close();

    const logstream = await openSqliteLogstream(dir);
    const ctx = { logstream, mesh: { replicaName: 't' } };
    const replica = await logstream.replicaId();
    const fresh = (await eventAppend(ctx, { type: 'status.update', stream: 's', room: 'r', from_agent: 'new' })).event;
    const { events } = await eventList(ctx, {});
    await logstream.close();

    expect(events.map((e) => [e.id, e.seq, e.origin_replica, e.origin_seq])).toEqual([
      ['evt_20250101T000002_aaaaaaaaaaaa', 1, replica, 1],
      ['evt_20250101T000001_bbbbbbbbbbbb', 2, replica, 2],
      [fresh.id, 3, replica, 3],
    ]);
    expect(events[0]!.hlc).toBe(`${String(Date.parse('2025-01-01T00:00:02Z')).padStart(13, '0')}-000001-${replica}`);
    expect(events[0]!.topic).toBeNull();
    expect(events[1]!.metadata).toEqual({});
    expect(fresh.hlc > events[0]!.hlc && fresh.hlc > events[1]!.hlc).toBe(true);

    const check = new Database(path.join(dir, 'logstream.sqlite3'), { readonly: true });
    const indexes = (check.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events'").all() as { name: string }[]).map((r) =>
      r.name
    );
    const artifactOrigin = (check.prepare('SELECT origin_replica FROM artifacts').get() as { origin_replica: string }).origin_replica;
    check.close();
    expect(indexes).toEqual(expect.arrayContaining(['events_origin_seq_idx', 'events_hlc_idx', 'events_stream_created_idx', 'events_to_agent_rowid_idx']));
    expect(artifactOrigin).toBe(replica);
  });
});

describe('replica.json', () => {
  it('is minted once, shared by later opens, and never replaced when it is invalid', async () => {
    const first = loadOrMintReplicaId(dir);
    expect(first).toMatch(/^rep_[0-9a-f]{32}$/);
    expect(loadOrMintReplicaId(dir)).toBe(first);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'replica.json'), 'utf8'))).toEqual({ replica_id: first, minted_at_note: 'RFC 004 step 0' });
    fs.writeFileSync(path.join(dir, 'replica.json'), '{"replica_id": "rep_XYZ"}');
    expect(() => loadOrMintReplicaId(dir)).toThrow(/no valid replica_id/);
    fs.writeFileSync(path.join(dir, 'replica.json'), '{"replica_id": "rep_0123456789ab"}');
    expect(loadOrMintReplicaId(dir)).toBe('rep_0123456789ab');
    expect(fs.readdirSync(dir)).toEqual(['replica.json']);
  });
});
