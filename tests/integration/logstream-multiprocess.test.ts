/**
 * The embedded logstream and locks shared by separate processes (the tests a, b, d):
 * every writer is its own Node process on the same palace directory.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventAppend, eventList, eventWait, type LogstreamContext } from '../../palace/logstream/logstream.js';
import type { StoredEvent } from '../../stores/ports/logstream/records.js';
import { openSqliteLogstream, type SqliteLogstream } from '../../stores/embedded/logstream/sqlite-logstream.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const writerScript = path.join(root, 'tests/fixtures/logstream-writer.ts');
const lockScript = path.join(root, 'tests/fixtures/logstream-locks-worker.ts');

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(script: string, args: string[]): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const jsonLines = <T>(text: string): T[] => text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as T);

describe('embedded logstream across processes', () => {
  let dir: string;
  let logstream: SqliteLogstream;
  let ctx: LogstreamContext;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mp-logstream-mp-'));
    logstream = await openSqliteLogstream(dir);
    ctx = { logstream, mesh: { replicaName: 'test' } };
  });
  afterEach(async () => {
    await logstream.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('20 writer processes × 500 appends: nothing lost, seq strictly increasing, exact page boundaries', async () => {
    const WRITERS = 20;
    const PER_WRITER = 500;
    const writers = Array.from({ length: WRITERS }, (_, w) => run(writerScript, ['append', dir, String(w), String(PER_WRITER)]));
    let finished = false;
    const all = Promise.all(writers).finally(() => (finished = true));

    // Page with small pages while the writers run, then drain: the pages must join exactly.
    const paged: StoredEvent[] = [];
    let cursor: string | undefined;
    for (;;) {
      const done = finished;
      const page = await eventList(ctx, { stream: 'project/load', limit: 37, ...(cursor ? { since_event_id: cursor } : {}) });
      paged.push(...page.events);
      if (page.count > 0) cursor = page.events.at(-1)!.id;
      else if (done) break;
      else await new Promise((r) => setTimeout(r, 20));
    }
    for (const r of await all) {
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    }

    expect(paged).toHaveLength(WRITERS * PER_WRITER);
    expect(new Set(paged.map((e) => e.id)).size).toBe(WRITERS * PER_WRITER);
    // Rows are never deleted, so arrival positions are exactly 1..N; hlc follows seq across processes.
    paged.forEach((e, i) => {
      expect(e.seq).toBe(i + 1);
      expect(e.origin_seq).toBe(e.seq);
      if (i > 0) expect(e.hlc > paged[i - 1]!.hlc).toBe(true);
    });
    // Each writer's own appends arrive in its order, none missing.
    const perWriter = new Map<number, number[]>();
    for (const e of paged) {
      const { writer, i } = e.metadata as { writer: number; i: number };
      perWriter.set(writer, [...(perWriter.get(writer) ?? []), i]);
    }
    expect(perWriter.size).toBe(WRITERS);
    for (const seen of perWriter.values()) expect(seen).toEqual(Array.from({ length: PER_WRITER }, (_, i) => i));

    // A second pass with another page size over the finished log gives the same sequence.
    const again: string[] = [];
    cursor = undefined;
    for (;;) {
      const page = await eventList(ctx, { limit: 500, ...(cursor ? { since_event_id: cursor } : {}) });
      if (page.count === 0) break;
      again.push(...page.events.map((e) => e.id));
      cursor = page.events.at(-1)!.id;
    }
    expect(again).toEqual(paged.map((e) => e.id));
  });

  it('event_wait is woken by an append from another process, well before its timeout', async () => {
    const first = (await eventAppend(ctx, { type: 'task.request', stream: 's', room: 'r', from_agent: 'me' })).event;
    const started = Date.now();
    const waiting = eventWait(ctx, { since_event_id: first.id, to_agent: 'me', type: 'patch.ready', timeout_ms: 30_000 });
    const child = run(writerScript, ['delayed', dir, '1000',
      JSON.stringify({ type: 'patch.ready', stream: 's', room: 'patches', from_agent: 'worker', to_agent: 'me' })]);
    const result = await waiting;
    const elapsed = Date.now() - started;
    const appended = jsonLines<{ id: string; appended_at_ms: number }>((await child).stdout)[0]!;
    expect(result.timed_out).toBe(false);
    expect(result.events.map((e) => e.id)).toEqual([appended.id]);
    expect(elapsed).toBeLessThan(15_000);
    // The waiter saw the event after the other process committed it, and promptly.
    expect(Date.now()).toBeGreaterThanOrEqual(appended.appended_at_ms - 50);
  });

  it('event_wait times out with timed_out: true when the other process appends nothing that matches', async () => {
    const first = (await eventAppend(ctx, { type: 'task.request', stream: 's', room: 'r', from_agent: 'me' })).event;
    const started = Date.now();
    const waiting = eventWait(ctx, { since_event_id: first.id, to_agent: 'me', timeout_ms: 4_000 });
    const child = await run(writerScript, ['delayed', dir, '200',
      JSON.stringify({ type: 'status.update', stream: 's', room: 'r', from_agent: 'x', to_agent: 'someone-else' })]);
    expect(child.code).toBe(0);
    const result = await waiting;
    expect(result).toEqual({ timed_out: true, events: [], count: 0 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(3_990);
    expect((await eventList(ctx, {})).count).toBe(2);
  });
});

describe('embedded locks across processes', () => {
  it('one holder at a time, tokens increasing with tenure order', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mp-locks-mp-'));
    try {
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => run(lockScript, [dir, 'palace/source', `worker-${i}`, '15'])));
      for (const r of results) {
        expect(r.stderr).toBe('');
        expect(r.code).toBe(0);
      }
      const tenures = results.flatMap((r) => jsonLines<{ holder: string; token: number; start: number; end: number }>(r.stdout)).sort((a, b) =>
        a.token - b.token
      );
      expect(tenures).toHaveLength(90);
      expect(tenures.map((t) => t.token)).toEqual(Array.from({ length: 90 }, (_, i) => i + 1));
      for (let i = 1; i < tenures.length; i++) expect(tenures[i]!.start).toBeGreaterThanOrEqual(tenures[i - 1]!.end);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
