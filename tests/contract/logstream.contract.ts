/**
 * The logstream contract (docs/logstream.md §12, items 1–15 and the estate shape of 19), written once
 * and run against every adapter of the `Logstream` port through the palace operations the MCP
 * tools call. Each test gets a fresh, empty store from `open`.
 */
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rejectionOf } from '../helpers/errors.js';
import { eventDraft } from '../helpers/events.js';
import * as ops from '../../palace/logstream/logstream.js';
import { TOOLS_BY_NAME } from '../../mcp/registry.js';
import { toolFailure } from '../../mcp/results.js';
import type { LogstreamContext, ToolArgs } from '../../palace/logstream/logstream.js';
import type { LogstreamStore } from '../../stores/ports/palace-stores.js';
import type { StoredEvent } from '../../stores/ports/logstream/records.js';

export interface OpenedLogstream {
  logstream: LogstreamStore;
  cleanup(): Promise<void>;
}

const EVENT_ID_RE = /^evt_\d{8}T\d{6}_[0-9a-f]{12}$/;
const ARTIFACT_ID_RE = /^art_\d{8}T\d{6}_[0-9a-f]{12}$/;
const INSTANT_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const HLC_RE = /^(\d{13})-([0-9a-f]{6})-(rep_[0-9a-f]+)$/;
const EVENT_KEYS = ['id', 'seq', 'origin_replica', 'origin_seq', 'hlc', 'type', 'stream', 'room', 'topic', 'from_agent', 'to_agent', 'correlation_id', 'branch',
  'base_commit', 'status', 'artifact_ids', 'body', 'created_at', 'metadata'];

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const base: ToolArgs = { type: 'status.update', stream: 'project/atlas', room: 'status', from_agent: 'mac-claude' };

export function describeLogstreamContract(adapterName: string, open: () => Promise<OpenedLogstream>): void {
  describe(`Logstream contract — ${adapterName}`, () => {
    let opened: OpenedLogstream;
    let ctx: LogstreamContext;
    /** Every write the palace layer makes through the port, to prove "nothing written". */
    let writes: string[];

    beforeEach(async () => {
      opened = await open();
      writes = [];
      const writeMethods = new Set<PropertyKey>(['append', 'appendFor', 'putArtifact', 'submitPatch']);
      const recording = new Proxy(opened.logstream, {
        get(target, prop) {
          const value = Reflect.get(target, prop, target) as unknown;
          if (typeof value !== 'function') return value;
          const bound = (value as (...a: unknown[]) => unknown).bind(target);
          if (!writeMethods.has(prop)) return bound;
          return (...a: unknown[]) => {
            writes.push(String(prop));
            return bound(...a);
          };
        },
      });
      ctx = { logstream: recording, mesh: { replicaName: 'contract-node' } };
    });
    afterEach(async () => {
      await opened.cleanup();
    });

    const append = async (args: ToolArgs = {}) => (await ops.eventAppend(ctx, { ...base, ...args })).event;
    const all = async () => (await ops.eventList(ctx, { limit: 500 })).events;
    const ids = (events: StoredEvent[]) => events.map((e) => e.id);

    describe('append and round trip (docs/logstream.md §12.1)', () => {
      it('assigns id, seq, created_at, origin and an increasing hlc', async () => {
        const replica = await opened.logstream.replicaId();
        expect(replica).toMatch(/^rep_(?:[0-9a-f]{32}|[0-9a-f]{12})$/);
        const events = [await append(), await append(), await append()];
        let previousHlc = '';
        let previousSeq = 0;
        for (const e of events) {
          expect(Object.keys(e)).toEqual(EVENT_KEYS);
          expect(e.id).toMatch(EVENT_ID_RE);
          expect(e.created_at).toMatch(INSTANT_RE);
          expect(Number.isInteger(e.seq) && e.seq > previousSeq).toBe(true);
          expect(e.origin_replica).toBe(replica);
          expect(e.origin_seq).toBe(e.seq);
          const m = HLC_RE.exec(e.hlc);
          expect(m?.[3]).toBe(replica);
          expect(e.hlc > previousHlc).toBe(true);
          previousHlc = e.hlc;
          previousSeq = e.seq;
        }
        expect(new Set(ids(events)).size).toBe(3);
      });

      it('lists every field back verbatim, including a multi-line body and nested metadata', async () => {
        const art = (await ops.artifactPut(ctx, { kind: 'note', content: 'n', created_by: 'mac-claude' })).artifact;
        const stored = await append({
          topic: 'auth-v2',
          to_agent: 'host:agent:project',
          correlation_id: 'c-1',
          branch: 'feature/x',
          base_commit: 'abc1234',
          status: 'open',
          body: '  line one\n\tline two\r\n  ünïcødé 🎉  \n',
          metadata: { z: [1, { b: 2, a: 'x' }], a: null, m: { nested: { deep: true } } },
          artifact_ids: [art.id],
        });
        const [listed] = await all();
        expect(listed).toEqual(stored);
        expect(listed!.body).toBe('  line one\n\tline two\r\n  ünïcødé 🎉  \n');
        expect(listed!.metadata).toEqual({ a: null, m: { nested: { deep: true } }, z: [1, { a: 'x', b: 2 }] });
        expect(Object.keys(listed!.metadata)).toEqual(['a', 'm', 'z']);
        expect(listed!.to_agent).toBe('host:agent:project');
      });

      it('defaults optional fields to null, body to "" and metadata to {}', async () => {
        const e = await append({ topic: '', to_agent: null, body: null, metadata: null, artifact_ids: null, status: '' });
        expect(e).toMatchObject({ topic: null, to_agent: null, correlation_id: null, branch: null, base_commit: null, status: null, body: '', metadata: {},
          artifact_ids: [] });
      });

      it('trims routing fields and the type', async () => {
        const e = await append({ type: '  task.reply \n', stream: '\n project/atlas ', room: ' status\t', from_agent: ' a b ' });
        expect([e.type, e.stream, e.room, e.from_agent]).toEqual(['task.reply', 'project/atlas', 'status', 'a b']);
      });
    });

    describe('validation (docs/logstream.md §12.2)', () => {
      const cases: [string, ToolArgs, string, string][] = [
        ['missing type', { type: undefined }, 'type', 'type must be a non-empty string'],
        ['blank type', { type: '   ' }, 'type', 'type must be a non-empty string'],
        ['uppercase type', { type: 'Task.Request' }, 'type',
          "type='Task.Request' is not a valid event type (lowercase letters, digits, '.', '_', '-'; max 64 chars)"],
        ['type too long', { type: `a${'b'.repeat(64)}` }, 'type',
          `type='a${'b'.repeat(64)}' is not a valid event type (lowercase letters, digits, '.', '_', '-'; max 64 chars)`],
        ['missing stream', { stream: '' }, 'stream', 'stream must be a non-empty string'],
        ['non-string room', { room: 7 }, 'room', 'room must be a non-empty string'],
        ['blank optional topic', { topic: '  ' }, 'topic', 'topic must be a non-empty string'],
        ['missing from_agent', { from_agent: null }, 'from_agent', 'from_agent must be a non-empty string'],
        ['long to_agent', { to_agent: 'x'.repeat(257) }, 'to_agent', 'to_agent exceeds maximum length of 256 characters'],
        ['control character', { correlation_id: 'a\tb' }, 'correlation_id', 'correlation_id contains control characters'],
        ['DEL character', { branch: 'a\u007fb' }, 'branch', 'branch contains control characters'],
        ['inner newline', { base_commit: 'abc\ndef' }, 'base_commit', 'base_commit contains control characters'],
        ['unknown status', { status: 'done' }, 'status', "status='done' is not one of: applied, blocked, claimed, failed, open, ready, superseded"],
        ['status is case-sensitive', { status: 'Open' }, 'status', "status='Open' is not one of: applied, blocked, claimed, failed, open, ready, superseded"],
        ['status is not trimmed', { status: ' open' }, 'status', "status=' open' is not one of: applied, blocked, claimed, failed, open, ready, superseded"],
        ['non-string body', { body: 5 }, 'body', 'body must be a string'],
        ['NUL in body', { body: 'a\0b' }, 'body', 'body contains null bytes'],
        ['array metadata', { metadata: [1] }, 'metadata', 'metadata must be an object'],
        ['string metadata', { metadata: '{}' }, 'metadata', 'metadata must be an object'],
        ['artifact_ids not a list', { artifact_ids: 'art_x' }, 'artifact_ids', 'artifact_ids must be a list of artifact id strings'],
        ['empty artifact id', { artifact_ids: [''] }, 'artifact_ids', 'artifact_ids must be a list of artifact id strings'],
      ];
      for (const [name, args, field, message] of cases) {
        it(`${name}: names ${field} and writes nothing`, async () => {
          await append();
          const err = await rejectionOf(ops.eventAppend(ctx, { ...base, ...args }));
          expect(err.code).toBe('invalid_argument');
          expect(err.field).toBe(field);
          expect(err.message).toBe(message);
          expect(await all()).toHaveLength(1);
          expect(writes).toEqual(['append']);
        });
      }

      it('reports the first failure in the order of docs/logstream.md §3.2', async () => {
        const err = await rejectionOf(ops.eventAppend(ctx, { type: 'X', stream: '', room: '', from_agent: '', status: 'bad', body: 1 }));
        expect(err.field).toBe('type');
        const err2 = await rejectionOf(ops.eventAppend(ctx, { ...base, to_agent: '\u0001', status: 'bad' }));
        expect(err2.field).toBe('to_agent');
        expect(writes).toEqual([]);
      });

      it('refuses metadata that is not JSON-serialisable', async () => {
        const cyclic: Record<string, unknown> = {};
        cyclic.self = cyclic;
        for (const metadata of [cyclic, { n: Number.NaN }, { d: new Date(0) }]) {
          const err = await rejectionOf(ops.eventAppend(ctx, { ...base, metadata }));
          expect(err.field).toBe('metadata');
          expect(err.message.startsWith('metadata is not JSON-serializable: ')).toBe(true);
        }
        expect(await all()).toHaveLength(0);
      });
    });

    describe('size limits (docs/logstream.md §12.3)', () => {
      it('accepts a body of exactly 262144 bytes and refuses one more, counting bytes', async () => {
        await append({ body: 'a'.repeat(262_144) });
        await append({ body: 'é'.repeat(131_072) });
        expect((await rejectionOf(append({ body: 'a'.repeat(262_145) }))).message).toBe('body is 262145 bytes; maximum is 262144 bytes');
        expect((await rejectionOf(append({ body: `${'é'.repeat(131_072)}a` }))).message).toBe('body is 262145 bytes; maximum is 262144 bytes');
        expect((await rejectionOf(append({ body: '🎉'.repeat(65_537) }))).message).toBe('body is 262148 bytes; maximum is 262144 bytes');
        const stored = await all();
        expect(stored.map((e) => Buffer.byteLength(e.body))).toEqual([262_144, 262_144]);
      });

      it('accepts metadata of exactly 65536 canonical bytes and refuses one more', async () => {
        // Canonical text `{"k": "<v>"}` is the value plus 9 bytes.
        await append({ metadata: { k: 'v'.repeat(65_527) } });
        expect((await rejectionOf(append({ metadata: { k: 'v'.repeat(65_528) } }))).message).toBe('metadata exceeds maximum size of 65536 bytes');
        expect((await rejectionOf(append({ metadata: { k: 'é'.repeat(32_764) } }))).message).toBe('metadata exceeds maximum size of 65536 bytes');
        expect(await all()).toHaveLength(1);
      });

      it('accepts an artifact of exactly 4194304 bytes and refuses one more', async () => {
        const ok = (await ops.artifactPut(ctx, { kind: 'log', content: 'x'.repeat(4_194_304), created_by: 'a' })).artifact;
        expect(ok.size_bytes).toBe(4_194_304);
        const err = await rejectionOf(ops.artifactPut(ctx, { kind: 'log', content: `${'x'.repeat(4_194_303)}é`, created_by: 'a' }));
        expect(err.message).toBe('content is 4194305 bytes; maximum is 4194304 bytes');
        expect(err.field).toBe('content');
        expect(writes).toEqual(['putArtifact']);
      });
    });

    describe('lone surrogates (docs/logstream.md §12.4)', () => {
      it('stores them as U+FFFD in body, routing fields, metadata and artifact content', async () => {
        const e = await append({ body: 'a\uD800b\uDC00c', from_agent: 'agent\uDBFF', topic: '\uDC00t', metadata: { k: 'v\uD801' } });
        expect(e.body).toBe('a\uFFFDb\uFFFDc');
        expect(e.from_agent).toBe('agent\uFFFD');
        expect(e.topic).toBe('\uFFFDt');
        expect(e.metadata).toEqual({ k: 'v\uFFFD' });
        expect((await all())[0]).toEqual(e);
        const art = (await ops.artifactPut(ctx, { kind: 'note', content: 'x\uD83Dy', created_by: 'a' })).artifact;
        const got = (await ops.artifactGet(ctx, { artifact_id: art.id })).artifact;
        expect(got.content).toBe('x\uFFFDy');
        expect(got.sha256).toBe(sha256('x\uFFFDy'));
        expect(got.size_bytes).toBe(5);
      });

      it('keeps valid surrogate pairs', async () => {
        const e = await append({ body: '🎉', from_agent: '🤖' });
        expect([e.body, e.from_agent]).toEqual(['🎉', '🤖']);
      });
    });

    describe('artifact references (docs/logstream.md §12.5)', () => {
      it('refuses unknown ids, keeps known ones, collapses duplicates', async () => {
        const a1 = (await ops.artifactPut(ctx, { kind: 'note', content: 'one', created_by: 'a' })).artifact;
        const a2 = (await ops.artifactPut(ctx, { kind: 'note', content: 'two', created_by: 'a' })).artifact;
        const err = await rejectionOf(append({ artifact_ids: [a1.id, 'art_missing'] }));
        expect(err.message).toBe("artifact_ids references unknown artifact 'art_missing'");
        expect(err.field).toBe('artifact_ids');
        expect(await all()).toHaveLength(0);
        const e = await append({ artifact_ids: [a2.id, a1.id, a2.id] });
        expect(e.artifact_ids).toEqual([a2.id, a1.id]);
        const [listed] = await all();
        expect(listed!.artifact_ids).toEqual([a1.id, a2.id].sort());
      });
    });

    describe('filters (docs/logstream.md §12.6)', () => {
      it('applies each filter alone and combined, with to_agent matching broadcasts', async () => {
        const e1 = await append({ stream: 's1', room: 'r1', topic: 't1', type: 'task.request', to_agent: 'bob', from_agent: 'alice', correlation_id: 'c1',
          status: 'open' });
        const e2 = await append({ stream: 's1', room: 'r2', topic: 't2', type: 'task.reply', to_agent: '*', from_agent: 'bob', correlation_id: 'c1',
          status: 'ready' });
        const e3 = await append({ stream: 's2', room: 'r1', type: 'task.request', to_agent: 'carol', from_agent: 'alice', correlation_id: 'c2' });
        const e4 = await append({ stream: 's2', room: 'r2', type: 'status.update', from_agent: 'carol' });
        const q = async (args: ToolArgs) => ids((await ops.eventList(ctx, args)).events);
        expect(await q({ stream: 's1' })).toEqual([e1.id, e2.id]);
        expect(await q({ room: 'r1' })).toEqual([e1.id, e3.id]);
        expect(await q({ topic: 't2' })).toEqual([e2.id]);
        expect(await q({ type: 'task.request' })).toEqual([e1.id, e3.id]);
        expect(await q({ from_agent: 'alice' })).toEqual([e1.id, e3.id]);
        expect(await q({ correlation_id: 'c1' })).toEqual([e1.id, e2.id]);
        expect(await q({ status: 'ready' })).toEqual([e2.id]);
        expect(await q({ to_agent: 'bob' })).toEqual([e1.id, e2.id]);
        expect(await q({ to_agent: 'carol' })).toEqual([e2.id, e3.id]);
        expect(await q({ to_agent: '*' })).toEqual([e2.id]);
        expect(await q({ to_agent: 'nobody' })).toEqual([e2.id]);
        expect(await q({ stream: 's2', room: 'r1', from_agent: 'alice' })).toEqual([e3.id]);
        expect(await q({ stream: 's1', to_agent: 'carol' })).toEqual([e2.id]);
        expect(await q({ type: 'task.request', status: 'open', correlation_id: 'c1' })).toEqual([e1.id]);
        expect(await q({ stream: '', room: null, status: '' })).toEqual([e1.id, e2.id, e3.id, e4.id]);
      });

      it('reports impossible filter values instead of matching nothing', async () => {
        expect((await rejectionOf(ops.eventList(ctx, { type: 'Bad Type' }))).field).toBe('type');
        expect((await rejectionOf(ops.eventList(ctx, { status: 'closed' }))).message).toBe(
          "status='closed' is not one of: applied, blocked, claimed, failed, open, ready, superseded",
        );
        expect((await rejectionOf(ops.eventList(ctx, { stream: 'a\nb' }))).message).toBe('stream contains control characters');
        expect((await rejectionOf(ops.eventWait(ctx, { status: 'closed', timeout_ms: 0 }))).field).toBe('status');
      });
    });

    describe('cursors and order (docs/logstream.md §12.7)', () => {
      it('since_event_id is strictly after, even within one second; before_event_id and both', async () => {
        const es: StoredEvent[] = [];
        for (let i = 0; i < 6; i++) es.push(await append({ body: String(i) }));
        expect(new Set(es.map((e) => e.created_at)).size).toBeLessThanOrEqual(2);
        const q = async (args: ToolArgs) => ids((await ops.eventList(ctx, args)).events);
        const id = (i: number) => es[i]!.id;
        expect(await q({ since_event_id: id(2) })).toEqual([id(3), id(4), id(5)]);
        expect(await q({ before_event_id: id(2) })).toEqual([id(0), id(1)]);
        expect(await q({ since_event_id: id(1), before_event_id: id(4) })).toEqual([id(2), id(3)]);
        expect(await q({ since_event_id: id(5) })).toEqual([]);
        expect(await q({ order: 'desc' })).toEqual([5, 4, 3, 2, 1, 0].map(id));
        expect(await q({ order: ' DESC ', limit: 2 })).toEqual([id(5), id(4)]);
        expect(await q({ order: 'Asc', limit: 2 })).toEqual([id(0), id(1)]);
        expect(await q({ order: 'desc', since_event_id: id(1), limit: 2 })).toEqual([id(5), id(4)]);
        expect(await q({ order: 'desc', before_event_id: id(3), limit: 2 })).toEqual([id(2), id(1)]);
        expect(await q({ order: null })).toEqual([0, 1, 2, 3, 4, 5].map(id));
      });

      it('refuses unknown cursors and bad orders', async () => {
        await append();
        const e1 = await rejectionOf(ops.eventList(ctx, { since_event_id: 'evt_20260101T000000_000000000000' }));
        expect(e1.message).toBe("since_event_id 'evt_20260101T000000_000000000000' not found");
        expect(e1.field).toBe('since_event_id');
        expect((await rejectionOf(ops.eventList(ctx, { before_event_id: 'nope' }))).message).toBe("before_event_id 'nope' not found");
        expect((await rejectionOf(ops.eventWait(ctx, { since_event_id: 'nope', timeout_ms: 0 }))).message).toBe("since_event_id 'nope' not found");
        const bad = await rejectionOf(ops.eventList(ctx, { order: 'newest' }));
        expect(bad.message).toBe("order='newest' must be 'asc' or 'desc'");
        expect(bad.field).toBe('order');
      });

      it('pages forward with small pages without gaps or repeats', async () => {
        const appended: string[] = [];
        for (let i = 0; i < 23; i++) appended.push((await append({ body: `p${i}` })).id);
        const seen: string[] = [];
        let cursor: string | undefined;
        for (;;) {
          const page = await ops.eventList(ctx, { limit: 4, ...(cursor ? { since_event_id: cursor } : {}) });
          if (page.count === 0) break;
          seen.push(...ids(page.events));
          cursor = page.events.at(-1)!.id;
        }
        expect(seen).toEqual(appended);
        const back: string[] = [];
        cursor = undefined;
        for (;;) {
          const page = await ops.eventList(ctx, { limit: 5, order: 'desc', ...(cursor ? { before_event_id: cursor } : {}) });
          if (page.count === 0) break;
          back.push(...ids(page.events));
          cursor = page.events.at(-1)!.id;
        }
        expect(back).toEqual([...appended].reverse());
      });
    });

    describe('since_created_at (docs/logstream.md §12.8)', () => {
      it('is inclusive, accepts a bare date and normalises +00:00', async () => {
        const e = await append();
        const day = e.created_at.slice(0, 10);
        const next = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
        const q = async (v: string) => ids((await ops.eventList(ctx, { since_created_at: v })).events);
        expect(await q(day)).toEqual([e.id]);
        expect(await q(next)).toEqual([]);
        expect(await q(e.created_at)).toEqual([e.id]);
        expect(await q(`${e.created_at.slice(0, 19)}+00:00`)).toEqual([e.id]);
        const later = new Date(Date.parse(e.created_at) + 1000).toISOString().slice(0, 19);
        expect(await q(`${later}Z`)).toEqual([]);
      });

      it('refuses other forms with the spec message', async () => {
        for (const v of ['2026-13-01', '2026-02-30', '2026-01-01T00:00:00', '2026-01-01 00:00:00Z', '2026-01-01T00:00:00.5Z', '2026-01-01T00:00:00+02:00',
          'yesterday', '2026-1-1']) {
          const err = await rejectionOf(ops.eventList(ctx, { since_created_at: v }));
          expect(err.field).toBe('since_created_at');
          expect(err.message).toBe(`since_created_at='${v}' is not a valid ISO-8601 date or UTC datetime (expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ)`);
        }
        expect((await rejectionOf(ops.eventList(ctx, { since_created_at: 20260101 }))).message).toBe('since_created_at must be a string');
      });
    });

    describe('limit (docs/logstream.md §12.9)', () => {
      it('defaults to 50, clamps to 500, coerces decimal strings, refuses 0, negatives and booleans', async () => {
        const port = opened.logstream;
        for (let i = 0; i < 501; i++)
          await port.append(eventDraft({ type: 'bulk', room: 'r', body: String(i) }));
        expect((await ops.eventList(ctx, {})).count).toBe(50);
        expect((await ops.eventList(ctx, { limit: 10_000 })).count).toBe(500);
        expect((await ops.eventList(ctx, { limit: '7' })).count).toBe(7);
        expect((await ops.eventList(ctx, { limit: 3.9 })).count).toBe(3);
        expect((await ops.eventWait(ctx, { limit: 2, timeout_ms: 0 })).count).toBe(2);
        expect((await rejectionOf(ops.eventList(ctx, { limit: 0 }))).message).toBe('limit must be a positive integer');
        expect((await rejectionOf(ops.eventList(ctx, { limit: -4 }))).message).toBe('limit must be a positive integer');
        expect((await rejectionOf(ops.eventList(ctx, { limit: true }))).field).toBe('limit');
        expect((await rejectionOf(ops.eventList(ctx, { limit: 'seven' }))).field).toBe('limit');
      });
    });

    describe('preview (docs/logstream.md §12.10)', () => {
      it('shortens long bodies to 200 code points and leaves short ones untouched', async () => {
        const long = `${'🎉'.repeat(150)}${'x'.repeat(4_850)}`;
        const e1 = await append({ body: long });
        const e2 = await append({ body: 'y'.repeat(200) });
        const { events } = await ops.eventList(ctx, { preview: true });
        expect(events[0]!.body).toBe(`${'🎉'.repeat(150)}${'x'.repeat(50)}`);
        expect(events[0]!.body_truncated).toBe(true);
        expect(events[0]!.body_length).toBe(5_000);
        expect(events[0]!.metadata).toEqual(e1.metadata);
        expect(events[1]).toEqual(e2);
        expect('body_truncated' in events[1]!).toBe(false);
        expect((await ops.eventList(ctx, { preview: false })).events[0]!.body).toBe(long);
        expect((await rejectionOf(ops.eventList(ctx, { preview: 'false' }))).field).toBe('preview');
      });
    });

    describe('response cap (docs/logstream.md §5.1)', () => {
      it('drops whole events from the end, reports the total, and always keeps the first', async () => {
        for (let i = 0; i < 5; i++) await append({ body: `${i}`.repeat(400) });
        const capped: LogstreamContext = { ...ctx, maxResponseChars: 3_000 };
        const page = await ops.eventList(capped, {});
        expect(page.truncated).toBe(true);
        expect(page.total).toBe(5);
        expect(page.count).toBe(page.events.length);
        expect(page.count).toBeGreaterThanOrEqual(1);
        expect(page.count).toBeLessThan(5);
        expect(ids(page.events)).toEqual(ids((await all()).slice(0, page.count)));
        expect(typeof page.notice).toBe('string');
        const tiny = await ops.eventList({ ...ctx, maxResponseChars: 10 }, {});
        expect(tiny.count).toBe(1);
        expect(tiny.events[0]!.body).toBe('0'.repeat(400));
        const roomy = await ops.eventList({ ...ctx, maxResponseChars: 1_000_000 }, {});
        expect(roomy).toEqual({ events: await all(), count: 5 });
      });
    });

    describe('wait (docs/logstream.md §12.11)', () => {
      it('returns existing matches at once, oldest first', async () => {
        const e1 = await append({ correlation_id: 'w' });
        const e2 = await append({ correlation_id: 'w' });
        const started = Date.now();
        const r = await ops.eventWait(ctx, { correlation_id: 'w', timeout_ms: 5_000 });
        expect(Date.now() - started).toBeLessThan(1_000);
        expect(r).toEqual({ timed_out: false, events: [e1, e2], count: 2 });
      });

      it('times out cleanly with count 0, and timeout_ms 0 checks once', async () => {
        const e = await append();
        const started = Date.now();
        expect(await ops.eventWait(ctx, { since_event_id: e.id, timeout_ms: 300 })).toEqual({ timed_out: true, events: [], count: 0 });
        expect(Date.now() - started).toBeGreaterThanOrEqual(290);
        expect(await ops.eventWait(ctx, { since_event_id: e.id, timeout_ms: 0 })).toEqual({ timed_out: true, events: [], count: 0 });
        expect((await rejectionOf(ops.eventWait(ctx, { timeout_ms: -1 }))).message).toBe('timeout_ms must be a non-negative number');
        expect((await rejectionOf(ops.eventWait(ctx, { timeout_ms: false }))).field).toBe('timeout_ms');
      });

      it('wakes on a matching append long before its timeout, ignoring non-matching ones', async () => {
        const first = await append();
        const waiting = ops.eventWait(ctx, { since_event_id: first.id, to_agent: 'worker', timeout_ms: 20_000 });
        const started = Date.now();
        await new Promise((r) => setTimeout(r, 150));
        await append({ to_agent: 'someone-else' });
        await new Promise((r) => setTimeout(r, 150));
        const match = await append({ to_agent: 'worker' });
        const result = await waiting;
        expect(Date.now() - started).toBeLessThan(5_000);
        expect(result.timed_out).toBe(false);
        expect(ids(result.events)).toEqual([match.id]);
      });
    });

    describe('ack (docs/logstream.md §12.12)', () => {
      it('routes back to the writer, copies stream/room/topic, falls back to the target id, leaves the target unchanged', async () => {
        const target = await append({ from_agent: 'alice', to_agent: 'bob', topic: 'auth', type: 'task.request' });
        const ack = (await ops.eventAck(ctx, { event_id: target.id, from_agent: 'bob', status: 'claimed', body: 'mine' })).event;
        expect(ack).toMatchObject({ type: 'event.ack', stream: target.stream, room: target.room, topic: 'auth', from_agent: 'bob', to_agent: 'alice',
          correlation_id: target.id, status: 'claimed', body: 'mine', branch: null, base_commit: null, artifact_ids: [], metadata: { ack_of: target.id } });
        expect(ack.seq).toBeGreaterThan(target.seq);
        expect((await all())[0]).toEqual(target);
      });

      it('keeps the target correlation id, overrides the topic, and "" clears it', async () => {
        const target = await append({ correlation_id: 'corr-9', topic: 'old' });
        expect((await ops.eventAck(ctx, { event_id: target.id, from_agent: 'x', topic: 'new' })).event).toMatchObject({ correlation_id: 'corr-9',
          topic: 'new' });
        expect((await ops.eventAck(ctx, { event_id: target.id, from_agent: 'x', topic: '' })).event.topic).toBeNull();
        expect((await ops.eventAck(ctx, { event_id: target.id, from_agent: 'x', topic: null })).event.topic).toBe('old');
        const ackOfAck = (await ops.eventAck(ctx, { event_id: (await all())[1]!.id, from_agent: 'mac-claude' })).event;
        expect(ackOfAck.type).toBe('event.ack');
      });

      it('refuses an unknown target and invalid ack fields without writing', async () => {
        const target = await append();
        const missing = await rejectionOf(ops.eventAck(ctx, { event_id: 'evt_missing', from_agent: 'x', status: 'nonsense' }));
        expect(missing.message).toBe("event 'evt_missing' not found");
        expect(missing.field).toBe('event_id');
        expect((await rejectionOf(ops.eventAck(ctx, { event_id: target.id, from_agent: 'x', status: 'nonsense' }))).field).toBe('status');
        expect((await rejectionOf(ops.eventAck(ctx, { event_id: target.id, from_agent: '' }))).message).toBe('from_agent must be a non-empty string');
        expect((await rejectionOf(ops.eventAck(ctx, { event_id: ' ', from_agent: 'x' }))).message).toBe('event_id must be a non-empty string');
        expect(await all()).toHaveLength(1);
      });
    });

    describe('artifacts (docs/logstream.md §12.13)', () => {
      it('stores exact content and hash, returns the record without content', async () => {
        const content = 'line 1\r\nzeile 2 ü\n\n  ';
        const put = await ops.artifactPut(ctx, { kind: 'file', content, created_by: ' alice ', metadata: { branch: 'b' } });
        expect(Object.keys(put.artifact)).toEqual(['id', 'kind', 'sha256', 'size_bytes', 'created_by', 'created_at', 'origin_replica']);
        expect(put.artifact).toMatchObject({ kind: 'file', sha256: sha256(content), size_bytes: Buffer.byteLength(content), created_by: 'alice',
          origin_replica: await opened.logstream.replicaId() });
        expect(put.artifact.id).toMatch(ARTIFACT_ID_RE);
        const got = await ops.artifactGet(ctx, { artifact_id: put.artifact.id });
        expect(Object.keys(got.artifact)).toEqual(['id', 'kind', 'sha256', 'size_bytes', 'content', 'created_by', 'created_at', 'origin_replica', 'metadata']);
        expect(got.artifact.content).toBe(content);
        expect(got.artifact.metadata).toEqual({ branch: 'b' });
        const again = await ops.artifactPut(ctx, { kind: 'file', content, created_by: 'alice' });
        expect(again.artifact.id).not.toBe(put.artifact.id);
        expect(again.artifact.sha256).toBe(put.artifact.sha256);
        expect((await ops.artifactPut(ctx, { kind: 'note', content: '   ', created_by: 'a' })).artifact.size_bytes).toBe(3);
      });

      it('adds patch warnings for a missing final newline and for CRLF', async () => {
        const clean = await ops.artifactPut(ctx, { kind: 'patch', content: 'diff --git a/x b/x\n', created_by: 'a' });
        expect('warnings' in clean.artifact).toBe(false);
        const both = await ops.artifactPut(ctx, { kind: 'patch', content: 'diff\r\n+x', created_by: 'a' });
        expect(both.artifact.warnings).toEqual([
          'patch content does not end with a trailing newline; git apply will reject the final hunk as corrupt — store the diff byte-exactly including its trailing newline',
          'patch content contains carriage returns (CRLF line endings); git apply often rejects CRLF diffs — generate the diff with LF endings',
        ]);
        expect((await ops.artifactPut(ctx, { kind: 'log', content: 'no newline', created_by: 'a' })).artifact.warnings).toBeUndefined();
      });

      it('validates kind, creator, content and metadata in order, and reports not found', async () => {
        const cases: [ToolArgs, string, string][] = [
          [{ kind: 'diff', content: 'x', created_by: 'a' }, 'kind', "kind='diff' is not one of: file, json, log, note, patch"],
          [{ kind: null, content: 'x', created_by: 'a' }, 'kind', 'kind=None is not one of: file, json, log, note, patch'],
          [{ kind: 'note', content: 'x', created_by: '' }, 'created_by', 'created_by must be a non-empty string'],
          [{ kind: 'note', content: '', created_by: 'a' }, 'content', 'content must be a non-empty string'],
          [{ kind: 'note', content: 42, created_by: 'a' }, 'content', 'content must be a non-empty string'],
          [{ kind: 'note', content: 'a\0', created_by: 'a' }, 'content', 'content contains null bytes'],
          [{ kind: 'note', content: 'x', created_by: 'a', metadata: [] }, 'metadata', 'metadata must be an object'],
          [{ kind: 'bad', content: '', created_by: '' }, 'kind', "kind='bad' is not one of: file, json, log, note, patch"],
        ];
        for (const [args, field, message] of cases) {
          const err = await rejectionOf(ops.artifactPut(ctx, args));
          expect([err.field, err.message]).toEqual([field, message]);
        }
        expect(writes).toEqual([]);
        const nf = await rejectionOf(ops.artifactGet(ctx, { artifact_id: 'art_nope' }));
        expect(nf.message).toBe("artifact 'art_nope' not found");
        expect(toolFailure(TOOLS_BY_NAME.get('mempalace_artifact_get')!, nf)).toEqual({ error: "artifact 'art_nope' not found", field: 'artifact_id',
          rule: 'known_artifact' });
        expect((await rejectionOf(ops.artifactGet(ctx, { artifact_id: '' }))).message).toBe('artifact_id must be a non-empty string');
      });
    });

    describe('patch submit (docs/logstream.md §12.14)', () => {
      it('stores the artifact and a patch.ready event citing it', async () => {
        const content = 'diff --git a/f b/f\n+1\n';
        const r = await ops.patchSubmit(ctx, { content, from_agent: 'bob', stream: 'project/atlas', to_agent: 'alice', correlation_id: 'task_x_1', branch: 'b',
          base_commit: 'abc1234', body: 'notes', metadata: { tests: 'pass' } });
        expect(r.event).toMatchObject({ type: 'patch.ready', status: 'ready', room: 'patches', from_agent: 'bob', to_agent: 'alice', correlation_id: 'task_x_1',
          body: 'notes', metadata: { tests: 'pass' }, artifact_ids: [r.artifact.id] });
        expect(r.artifact).toMatchObject({ kind: 'patch', created_by: 'bob', sha256: sha256(content) });
        const got = await ops.artifactGet(ctx, { artifact_id: r.artifact.id });
        expect(got.artifact.content).toBe(content);
        expect(got.artifact.metadata).toEqual({ tests: 'pass' });
        expect(writes).toEqual(['submitPatch']);
        const other = await ops.patchSubmit(ctx, { content: 'x', from_agent: 'bob', stream: 's', room: 'reviews' });
        expect(other.event.room).toBe('reviews');
        expect(other.artifact.warnings).toHaveLength(1);
      });

      it('leaves no artifact behind when the event half is invalid', async () => {
        const bad = await rejectionOf(ops.patchSubmit(ctx, { content: 'diff\n', from_agent: 'bob', stream: '  ' }));
        expect([bad.field, bad.message]).toEqual(['stream', 'stream must be a non-empty string']);
        const noAgent = await rejectionOf(ops.patchSubmit(ctx, { content: 'diff\n', from_agent: '', stream: 's' }));
        expect(noAgent.message).toBe('from_agent must be a non-empty string');
        expect((await rejectionOf(ops.patchSubmit(ctx, { content: 'diff\n', from_agent: 'a', stream: 's', body: 'x'.repeat(262_145) }))).field).toBe('body');
        expect(writes).toEqual([]);
        expect(await all()).toHaveLength(0);
      });
    });

    describe('task create (docs/logstream.md §12.15)', () => {
      const task: ToolArgs = { project: 'Atlas', from_agent: ' alice ', to_agent: 'bob', goal: 'Add CSV export to the billing page.', branch: 'feature/csv',
        base_commit: ' ABCDEF1234 ', done: 'Tests pass.\nDocs updated.' };

      it('stores the canonical task.request and returns the handoff line', async () => {
        const r = await ops.taskCreate(ctx, task);
        expect(r.task.correlation_id).toMatch(/^task_add_csv_export_to_the_billing_page_[0-9a-f]{8}$/);
        expect(r.task).toMatchObject({ type: 'task.request', stream: 'project/atlas', room: 'delegation', topic: null, from_agent: 'alice', to_agent: 'bob',
          branch: 'feature/csv', base_commit: 'abcdef1234', status: 'open', metadata: {}, artifact_ids: [] });
        expect(r.task.body).toBe(
          'Goal:\nAdd CSV export to the billing page.\n\nDefinition of done:\nTests pass.\nDocs updated.\n\nDelivery:\nClose the loop through MemPalace: claim the request, then submit a patch with mempalace_patch_submit or reply with blocked/failed evidence.',
        );
        expect(r.handoff).toBe(
          `Open MemPalace task ${r.task.correlation_id} as bob. Claim it, follow its exact definition of done, and deliver through the logstream.`,
        );
        const again = await ops.taskCreate(ctx, task);
        expect(again.task.correlation_id).not.toBe(r.task.correlation_id);
      });

      it('slugs with fallbacks', async () => {
        const r = await ops.taskCreate(ctx, { ...task, project: '  My  Big--Project!! ', goal: '实现导出' });
        expect(r.task.stream).toBe('project/my_big_project');
        expect(r.task.correlation_id).toMatch(/^task_work_[0-9a-f]{8}$/);
        // 43 slug characters cut to 40 end in `_`, which is stripped again.
        const long = await ops.taskCreate(ctx, { ...task, project: '項目', goal: 'abc '.repeat(11) });
        expect(long.task.stream).toBe('project/project');
        expect(long.task.correlation_id).toMatch(/^task_(?:abc_){9}abc_[0-9a-f]{8}$/);
      });

      it('refuses branch names, tags and short ids where a commit id is required, and blank inputs', async () => {
        for (const ref of ['main', 'v1.2', 'HEAD', 'abc12', 'feature/x', 'abcdefg']) {
          const err = await rejectionOf(ops.taskCreate(ctx, { ...task, base_commit: ref }));
          expect([err.field, err.message]).toEqual(['base_commit',
            'task base commit must be a hexadecimal Git object id (at least 7 characters), not a branch or tag']);
        }
        // Each field's blank message names it in words: `task <words> must not be empty`.
        const words = { project: 'project', from_agent: 'requesting agent', to_agent: 'destination agent', branch: 'branch', base_commit: 'base commit',
          goal: 'goal', done: 'definition of done' };
        for (const [field, named] of Object.entries(words)) {
          const err = await rejectionOf(ops.taskCreate(ctx, { ...task, [field]: '  ' }));
          expect([err.field, err.message]).toEqual([field, `task ${named} must not be empty`]);
        }
        expect((await rejectionOf(ops.taskCreate(ctx, { ...task, to_agent: 'b\u0007' }))).message).toBe('to_agent contains control characters');
        expect((await rejectionOf(ops.taskCreate(ctx, { ...task, goal: 'x'.repeat(262_144) }))).field).toBe('body');
        expect(writes).toEqual([]);
      });
    });

    describe('estate (docs/logstream.md §12.19, this node)', () => {
      it('describes this node, its version vector and no peers when none are configured', async () => {
        await append();
        await append();
        const estate = await ops.meshPeers(ctx);
        const replica = await opened.logstream.replicaId();
        expect(estate.self).toMatchObject({ replica_id: replica, name: 'contract-node', version_vector: { [replica]: 2 } });
        expect(estate.self.profile.roles).toEqual(['agents']);
        expect(estate.self.profile.advertised_at).toMatch(INSTANT_RE);
        expect(estate.peers).toEqual([]);
        expect(estate.unnamed_origins).toEqual([]);
        expect(estate.origin_profiles[replica]).toEqual(estate.self.profile);
        expect(estate.sync_interval_s).toBe(15);
      });

      it('lists configured peers without their tokens', async () => {
        const withPeers: LogstreamContext = { ...ctx,
          mesh: { replicaName: 'n',
            peers: async () => [{ name: 'desktop', url: 'https://desktop.example', token: 'sekret-token' } as { name: string; url: string }] } };
        const estate = await ops.meshPeers(withPeers);
        expect(estate.peers).toEqual([{ name: 'desktop', url: 'https://desktop.example' }]);
        expect(JSON.stringify(estate)).not.toContain('sekret-token');
      });
    });
  });
}
