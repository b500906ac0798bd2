/**
 * Bad input is refused with a structured error naming the field, and nothing is written
 * (checked in the SQLite file itself, not through the code under test).
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rejectionOf } from '../helpers/errors.js';
import * as ops from '../../palace/logstream/logstream.js';
import { TOOLS_BY_NAME } from '../../mcp/registry.js';
import { toolFailure } from '../../mcp/results.js';
import { openSqliteLogstream, type SqliteLogstream } from '../../stores/embedded/logstream/sqlite-logstream.js';
import { makeTempDir, removeDir } from '../helpers/tmp.js';

describe('logstream bad input (embedded)', () => {
  let dir: string;
  let logstream: SqliteLogstream;
  let ctx: ops.LogstreamContext;
  const rows = () => {
    const db = new Database(path.join(dir, 'logstream.sqlite3'), { readonly: true });
    try {
      const count = (t: string) => (db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n;
      return { events: count('events'), artifacts: count('artifacts'), links: count('event_artifacts') };
    } finally {
      db.close();
    }
  };
  const event = { type: 'status.update', stream: 'project/x', room: 'status', from_agent: 'alice' };

  beforeEach(async () => {
    dir = makeTempDir('mp-logstream-bad-');
    logstream = await openSqliteLogstream(dir);
    ctx = { logstream, mesh: { replicaName: 'test' } };
    await ops.eventAppend(ctx, event);
  });
  afterEach(async () => {
    await logstream.close();
    removeDir(dir);
  });

  it('refuses bad dates', async () => {
    for (const since of ['2026-02-29', '2026-04-31T10:00:00Z', '2026-01-01T24:00:00Z', '01/02/2026', '2026-01-01T10:00Z']) {
      const err = await rejectionOf(ops.eventList(ctx, { since_created_at: since }));
      expect([err.code, err.field, err.rule]).toEqual(['invalid_argument', 'since_created_at', 'iso_date_or_utc_instant']);
      const waitErr = await rejectionOf(ops.eventWait(ctx, { since_created_at: since, timeout_ms: 0 }));
      expect(waitErr.field).toBe('since_created_at');
    }
    expect((await ops.eventList(ctx, { since_created_at: '2024-02-29' })).count).toBe(1);
  });

  it('refuses a branch name where a commit id is required', async () => {
    const task = { project: 'p', from_agent: 'a', to_agent: 'b', goal: 'g', branch: 'main', done: 'd' };
    for (const base_commit of ['main', 'origin/main', 'refs/heads/x', 'v2.0.1', 'HEAD~1', 'deadbee!']) {
      const err = await rejectionOf(ops.taskCreate(ctx, { ...task, base_commit }));
      expect([err.field, err.rule]).toEqual(['base_commit', 'git_object_id']);
      expect(err.message).toBe('task base commit must be a hexadecimal Git object id (at least 7 characters), not a branch or tag');
    }
    expect(rows().events).toBe(1);
    // event_append keeps base_commit free text (docs/logstream.md §3.1); only task_create is strict.
    expect((await ops.eventAppend(ctx, { ...event, base_commit: 'main' })).event.base_commit).toBe('main');
  });

  it('refuses a 300 KiB body in every writing tool', async () => {
    const body = 'x'.repeat(300 * 1024);
    const message = `body is ${300 * 1024} bytes; maximum is 262144 bytes`;
    const target = (await ops.eventList(ctx, {})).events[0]!;
    for (const call of [
      ops.eventAppend(ctx, { ...event, body }),
      ops.eventAck(ctx, { event_id: target.id, from_agent: 'bob', body }),
      ops.patchSubmit(ctx, { content: 'diff\n', from_agent: 'bob', stream: 's', body }),
    ]) {
      const err = await rejectionOf(call);
      expect([err.field, err.rule, err.message]).toEqual(['body', 'max_bytes', message]);
    }
    expect(rows()).toEqual({ events: 1, artifacts: 0, links: 0 });
  });

  it('refuses a 5 MiB artifact, alone or as a patch', async () => {
    const content = 'y'.repeat(5 * 1024 * 1024);
    for (const call of [ops.artifactPut(ctx, { kind: 'log', content, created_by: 'a' }), ops.patchSubmit(ctx, { content, from_agent: 'a', stream: 's' })]) {
      const err = await rejectionOf(call);
      expect([err.field, err.rule, err.message]).toEqual(['content', 'max_bytes', `content is ${5 * 1024 * 1024} bytes; maximum is 4194304 bytes`]);
    }
    expect(rows()).toEqual({ events: 1, artifacts: 0, links: 0 });
  });

  it('stores text that is not valid UTF-16 with U+FFFD, and refuses content that is not text', async () => {
    // The spec's rule for lone surrogates is replacement, not refusal (docs/logstream.md §3.2, §4, §12.4).
    const e = (await ops.eventAppend(ctx, { ...event, body: 'bad \uD800 pair', room: 'r\uDFFF' })).event;
    expect([e.body, e.room]).toEqual(['bad \uFFFD pair', 'r\uFFFD']);
    const db = new Database(path.join(dir, 'logstream.sqlite3'), { readonly: true });
    const stored = db.prepare('SELECT body, room FROM events WHERE id = ?').get(e.id) as { body: string; room: string };
    db.close();
    expect(stored).toEqual({ body: 'bad \uFFFD pair', room: 'r\uFFFD' });
    // Version 1 artifacts are UTF-8 text only: bytes, numbers and objects are not content.
    for (const content of [Buffer.from([0xff, 0xfe, 0x00]), 12, { text: 'x' }, ['a']]) {
      const err = await rejectionOf(ops.artifactPut(ctx, { kind: 'file', content, created_by: 'a' }));
      expect([err.field, err.message]).toEqual(['content', 'content must be a non-empty string']);
    }
    expect((await rejectionOf(ops.artifactPut(ctx, { kind: 'file', content: 'a\u0000b', created_by: 'a' }))).message).toBe('content contains null bytes');
    expect(rows()).toEqual({ events: 2, artifacts: 0, links: 0 });
  });

  it('refuses unknown status values everywhere they are accepted', async () => {
    const target = (await ops.eventList(ctx, {})).events[0]!;
    for (const status of ['done', 'OPEN', 'in_progress', 3, true]) {
      for (const call of [
        ops.eventAppend(ctx, { ...event, status }),
        ops.eventAck(ctx, { event_id: target.id, from_agent: 'bob', status }),
        ops.eventList(ctx, { status }),
        ops.eventWait(ctx, { status, timeout_ms: 0 }),
      ]) {
        const err = await rejectionOf(call);
        expect([err.code, err.field, err.rule]).toEqual(['invalid_argument', 'status', 'one_of']);
      }
    }
    expect(rows().events).toBe(1);
  });

  it('maps failures to the tool-level payloads', async () => {
    const err = await rejectionOf(ops.eventAppend(ctx, { ...event, status: 'done' }));
    const message = "status='done' is not one of: applied, blocked, claimed, failed, open, ready, superseded";
    const tool = (name: string) => TOOLS_BY_NAME.get(`mempalace_${name}`)!;
    expect(toolFailure(tool('event_append'), err)).toEqual({ success: false, error: message, field: 'status', rule: 'one_of' });
    expect(toolFailure(tool('event_list'), err)).toEqual({ error: message, field: 'status', rule: 'one_of' });
    // Not the caller's doing: no tool-level payload, the call fails as a server error.
    expect(toolFailure(tool('event_append'), new Error('disk on fire'))).toBeUndefined();
  });
});
