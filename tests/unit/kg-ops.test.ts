import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rejectionOf } from '../helpers/errors.js';
import { hashN, lengthPrefixed } from '../../core/text.js';
import type { KgContext } from '../../palace/kg/kg.js';
import { addFact, kgAddOperation, kgInvalidateOperation, kgQueryOperation, kgStatsOperation, kgSupersedeOperation,
  kgTimelineOperation } from '../../palace/kg/kg.js';
import { openSqliteGraphStore } from '../../stores/embedded/sqlite-graph-store.js';
import type { GraphStore } from '../../stores/ports/graph-store.js';
import { openInTempDir, type TempStore } from '../helpers/tmp.js';
import { operationCall } from '../helpers/operation-call.js';

const kgAdd = operationCall(kgAddOperation);
const kgInvalidate = operationCall(kgInvalidateOperation);
const kgQuery = operationCall(kgQueryOperation);
const kgStats = operationCall(kgStatsOperation);
const kgSupersede = operationCall(kgSupersedeOperation);
const kgTimeline = operationCall(kgTimelineOperation);

let palace: TempStore<GraphStore>;
let graph: GraphStore;
let clock: Date;
let ctx: KgContext;

beforeEach(async () => {
  palace = await openInTempDir('mempalace-kg-', openSqliteGraphStore);
  graph = palace.store;
  clock = new Date('2026-03-10T15:30:45.123Z');
  ctx = { graph, now: () => clock };
});
afterEach(async () => {
  await palace.cleanup();
});

/** A fact added outside a face (no actor) and never changed. */
const UNOWNED = { created_by: null, updated_by: null, updated_at: null };
/** recorded_at's form; its microseconds only increase within a process, so tests that ran before move them on. */
const RECORDED = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** Everything the store holds, to show a rejected call wrote nothing. */
async function snapshot(): Promise<unknown> {
  return { stats: await graph.kgStats(), timeline: await graph.kgTimeline({ limit: 1000 }) };
}

describe('kg_add', () => {
  it('returns the spec shape with the id recipe and the fact text before predicate lowercasing', async () => {
    const r = await kgAdd(ctx, { subject: '  Max Smith ', predicate: 'Works At', object: "O'Brien Ltd", valid_from: '2025-01-01' });
    expect(r.success).toBe(true);
    expect(r.fact).toBe("Max Smith → Works At → O'Brien Ltd");
    const recorded = '2026-03-10T15:30:45.123000Z';
    expect(r.triple_id).toBe(`t_max_smith_works_at_obrien_ltd_${hashN(lengthPrefixed(['2025-01-01', recorded]), 12)}`);
    const q = await kgQuery(ctx, { entity: 'max smith' });
    expect(q.facts).toEqual([
      { direction: 'outgoing', subject: 'max smith', predicate: 'works_at', object: "O'Brien Ltd", valid_from: '2025-01-01', valid_to: null, confidence: 1,
        source_closet: null, current: true, ...UNOWNED },
    ]);
  });

  it('hashes a missing valid_from as the text None', async () => {
    // A later clock than other tests: recorded_at only ever increases within a process.
    clock = new Date('2027-01-01T00:00:00.456Z');
    const r = await kgAdd(ctx, { subject: 'a', predicate: 'p', object: 'b' });
    expect(r.triple_id).toBe(`t_a_p_b_${hashN(lengthPrefixed(['None', '2027-01-01T00:00:00.456000Z']), 12)}`);
  });

  it('gives distinct ids to facts recorded in the same millisecond', async () => {
    const a = await kgAdd(ctx, { subject: 'a', predicate: 'p', object: 'b', valid_from: '2020-01-01', valid_to: '2020-02-01' });
    const b = await kgAdd(ctx, { subject: 'a', predicate: 'p', object: 'b', valid_from: '2020-01-01', valid_to: '2020-03-01' });
    expect(a.triple_id).not.toBe(b.triple_id);
    expect((await kgStats(ctx)).triples).toBe(2);
  });

  it('is idempotent for a current fact and backfills an ended one in one call', async () => {
    const open = await kgAdd(ctx, { subject: 'Ann', predicate: 'works_at', object: 'Acme', valid_from: '2024-01-01' });
    expect((await kgAdd(ctx, { subject: 'ann', predicate: 'works at', object: 'acme' })).triple_id).toBe(open.triple_id);
    const past = await kgAdd(ctx, { subject: 'Ann', predicate: 'works_at', object: 'Acme', valid_from: '2019-01-01', valid_to: '2020-06-30' });
    expect(past.triple_id).not.toBe(open.triple_id);
    expect((await kgQuery(ctx, { entity: 'Ann', as_of: '2020-06-30T23:59:59Z' })).facts.map((f) => f.valid_to)).toEqual(['2020-06-30']);
    expect((await kgQuery(ctx, { entity: 'Ann', as_of: '2020-07-01' })).facts).toEqual([]);
  });

  it('normalises +00:00 to Z and stores provenance', async () => {
    await kgAdd(ctx, { subject: 'a', predicate: 'p', object: 'b', valid_from: '2024-05-05T10:00:00+00:00', source_closet: 'closet_x', source_file: '/src/a.md',
      source_drawer_id: 'drawer_w_r_1' });
    const [f] = (await kgQuery(ctx, { entity: 'a' })).facts;
    expect(f).toMatchObject({ valid_from: '2024-05-05T10:00:00Z', source_closet: 'closet_x' });
    const [stored] = await graph.kgFacts({ entity_id: 'a', direction: 'outgoing' });
    expect(stored).toMatchObject({ source_file: '/src/a.md', source_drawer_id: 'drawer_w_r_1' });
  });

  it('rejects an inverted interval as a ValueError naming valid_to, but accepts a same-day date window', async () => {
    const before = await snapshot();
    const e = await rejectionOf(kgAdd(ctx, { subject: 'a', predicate: 'p', object: 'b', valid_from: '2024-05-02', valid_to: '2024-05-01' }));
    expect(e.field).toBe('valid_to');
    expect(e.rule).toBe('inverted_interval');
    expect(e.details).toEqual({ error_class: 'ValueError' });
    expect(e.message).toContain('inverted interval');
    expect(await snapshot()).toEqual(before);
    await kgAdd(ctx, { subject: 'a', predicate: 'p', object: 'b', valid_from: '2024-05-01T18:00:00Z', valid_to: '2024-05-01' });
    expect((await kgQuery(ctx, { entity: 'a', as_of: '2024-05-01T23:00:00Z' })).count).toBe(1);
  });

  it.each([
    [{ subject: '' }, 'subject', 'subject must be a non-empty string'],
    [{ subject: 'x'.repeat(129) }, 'subject', 'subject exceeds maximum length of 128 characters'],
    [{ object: 'a\0b' }, 'object', 'object contains null bytes'],
    [{ predicate: 'a/b' }, 'predicate', 'predicate contains invalid path characters'],
    [{ predicate: '_x' }, 'predicate', 'predicate contains invalid characters'],
    [{ valid_from: '2024-02-30' }, 'valid_from',
      "valid_from='2024-02-30' is not a valid ISO-8601 date or UTC datetime (expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ)"],
    [{ valid_to: '2024-01-01T10:00:00.5Z' }, 'valid_to', 'is not a valid ISO-8601 date or UTC datetime'],
    [{ valid_to: '2024-01-01T10:00:00+02:00' }, 'valid_to', 'is not a valid ISO-8601 date or UTC datetime'],
    [{ source_file: 'a\0' }, 'source_file', 'source_file contains null bytes'],
    [{ source_closet: 'c'.repeat(513) }, 'source_closet', 'source_closet exceeds maximum length of 512 characters'],
    [{ source_drawer_id: 42 }, 'source_drawer_id', 'source_drawer_id must be a non-empty string'],
    [{ confidence: 1 }, 'confidence', "unknown property 'confidence'"],
  ])('rejects %j naming %s and writes nothing', async (override, field, message) => {
    const before = await snapshot();
    const e = await rejectionOf(kgAdd(ctx, { subject: 'a', predicate: 'p', object: 'b', ...override }));
    expect(e.code).toBe('invalid_argument');
    expect(e.field).toBe(field);
    expect(e.message).toContain(message);
    expect(await snapshot()).toEqual(before);
  });

  it('refuses a confidence outside 0–1 from a library caller (an extractor) and writes nothing', async () => {
    const before = await snapshot();
    const e = await rejectionOf(addFact(ctx, { subject: 'a', predicate: 'p', object: 'b', confidence: 2 }));
    expect(e.code).toBe('invalid_argument');
    expect(e.field).toBe('confidence');
    expect(e.message).toContain('confidence must be a number between 0 and 1');
    expect(await snapshot()).toEqual(before);
  });
});

describe('kg_invalidate', () => {
  it('ends every current match at the given value and reports it', async () => {
    await kgAdd(ctx, { subject: 'a', predicate: 'p', object: 'b', valid_from: '2024-01-01' });
    const r = await kgInvalidate(ctx, { subject: 'a', predicate: 'P', object: 'b', ended: '2024-03-01T12:00:00+00:00' });
    expect(r).toEqual({ success: true, fact: 'a → P → b', ended: '2024-03-01T12:00:00Z' });
    const [f] = (await kgQuery(ctx, { entity: 'a' })).facts;
    expect(f).toMatchObject({ valid_to: '2024-03-01T12:00:00Z', current: false });
  });

  it('defaults ended to the server-local calendar date, covering that whole day', async () => {
    await kgAdd(ctx, { subject: 'a', predicate: 'p', object: 'b' });
    const r = await kgInvalidate(ctx, { subject: 'a', predicate: 'p', object: 'b' });
    const p = (n: number) => String(n).padStart(2, '0');
    expect(r.ended).toBe(`${clock.getFullYear()}-${p(clock.getMonth() + 1)}-${p(clock.getDate())}`);
    expect((await kgQuery(ctx, { entity: 'a', as_of: `${r.ended}T23:59:59Z` })).count).toBe(1);
  });

  it('succeeds as a no-op without a match and accepts an over-long object as a lookup key', async () => {
    const long = 'o'.repeat(300);
    expect(await kgInvalidate(ctx, { subject: 'a', predicate: 'p', object: long, ended: '2024-01-01' })).toEqual({ success: true, fact: `a → p → ${long}`,
      ended: '2024-01-01' });
    expect((await kgStats(ctx)).triples).toBe(0);
  });

  it('fails as a ValueError naming ended when a current fact starts after it, and writes nothing', async () => {
    await kgAdd(ctx, { subject: 'a', predicate: 'p', object: 'b', valid_from: '2024-06-01' });
    await kgAdd(ctx, { subject: 'a', predicate: 'p', object: 'b', valid_from: '2023-01-01', valid_to: '2023-02-01' });
    const before = await snapshot();
    const e = await rejectionOf(kgInvalidate(ctx, { subject: 'a', predicate: 'p', object: 'b', ended: '2024-05-31' }));
    expect([e.field, e.rule, e.details?.error_class]).toEqual(['ended', 'inverted_interval', 'ValueError']);
    expect(await snapshot()).toEqual(before);
    // The same day as the start is fine: the fact then holds for that day only.
    await kgInvalidate(ctx, { subject: 'a', predicate: 'p', object: 'b', ended: '2024-06-01' });
    expect((await kgStats(ctx)).current_facts).toBe(0);
  });

  it('records who ended a fact and when, keeping who added it; outside a face the changer is unknown', async () => {
    await kgAdd({ ...ctx, actor: 'alice' }, { subject: 'a', predicate: 'p', object: 'b' });
    await kgInvalidate({ ...ctx, actor: 'bob' }, { subject: 'a', predicate: 'p', object: 'b', ended: '2026-03-31' });
    await kgAdd({ ...ctx, actor: 'alice' }, { subject: 'a', predicate: 'p', object: 'c' });
    await kgInvalidate(ctx, { subject: 'a', predicate: 'p', object: 'c', ended: '2026-03-31' });
    expect((await kgQuery(ctx, { entity: 'a' })).facts.map((f) => [f.object, f.created_by, f.updated_by, f.updated_at])).toEqual([
      ['b', 'alice', 'bob', expect.stringMatching(RECORDED)],
      ['c', 'alice', null, expect.stringMatching(RECORDED)],
    ]);
  });

  it('validates its inputs', async () => {
    expect((await rejectionOf(kgInvalidate(ctx, { subject: 'a', predicate: 'p', object: 'b', ended: 'yesterday' }))).field).toBe('ended');
    expect((await rejectionOf(kgInvalidate(ctx, { subject: 'a', predicate: 'p', object: 'b\0' }))).message).toBe('object contains null bytes');
    expect((await rejectionOf(kgInvalidate(ctx, { subject: null, predicate: 'p', object: 'b' }))).field).toBe('subject');
  });
});

describe('kg_supersede', () => {
  it('hands over at one instant: the boundary belongs to the new value only', async () => {
    await kgAdd(ctx, { subject: 'Agent', predicate: 'uses_model', object: 'M1', valid_from: '2025-01-01' });
    const r = await kgSupersede(ctx, { subject: 'Agent', predicate: 'uses_model', old_object: 'M1', new_object: 'M2', at: '2025-06-01T09:00:00Z' });
    expect(r).toMatchObject({ success: true, fact: 'Agent → uses_model → M2', superseded: 'M1' });
    const objectsAt = async (as_of: string) => (await kgQuery(ctx, { entity: 'Agent', as_of })).facts.map((f) => f.object);
    expect(await objectsAt('2025-06-01T08:59:59Z')).toEqual(['M1']);
    expect(await objectsAt('2025-06-01T09:00:00Z')).toEqual(['M2']);
    expect(await objectsAt('2025-06-01')).toEqual(['M1']);
  });

  it("records the call's actor: alice added the old fact, bob superseded it and added the new one", async () => {
    await kgAdd({ ...ctx, actor: 'alice' }, { subject: 'Agent', predicate: 'uses_model', object: 'M1', valid_from: '2025-01-01' });
    await kgSupersede({ ...ctx, actor: 'bob' }, { subject: 'Agent', predicate: 'uses_model', old_object: 'M1', new_object: 'M2', at: '2025-06-01T09:00:00Z' });
    const t = (await kgTimeline(ctx, { entity: 'Agent' })).timeline;
    expect(t.map((f) => [f.object, f.created_by, f.updated_by, f.updated_at])).toEqual([
      ['M1', 'alice', 'bob', expect.stringMatching(RECORDED)],
      ['M2', 'bob', null, null],
    ]);
  });

  it('normalises a date-only boundary to 00:00:00Z on both sides', async () => {
    await kgAdd(ctx, { subject: 'a', predicate: 'p', object: 'old', valid_from: '2025-01-01' });
    await kgSupersede(ctx, { subject: 'a', predicate: 'p', old_object: 'old', new_object: 'new', at: '2025-02-01' });
    const t = (await kgTimeline(ctx, { entity: 'a' })).timeline;
    expect(t.map((f) => [f.object, f.valid_from, f.valid_to])).toEqual([
      ['old', '2025-01-01', '2025-02-01T00:00:00Z'],
      ['new', '2025-02-01T00:00:00Z', null],
    ]);
    expect((await kgQuery(ctx, { entity: 'a', as_of: '2025-02-01' })).facts.map((f) => f.object)).toEqual(['new']);
  });

  it('defaults the boundary to the current UTC second', async () => {
    await kgSupersede(ctx, { subject: 'a', predicate: 'p', old_object: 'x', new_object: 'y' });
    expect((await kgQuery(ctx, { entity: 'a' })).facts[0]!.valid_from).toBe('2026-03-10T15:30:45Z');
  });

  it('rejects a boundary before the old fact started and writes nothing', async () => {
    await kgAdd(ctx, { subject: 'a', predicate: 'p', object: 'old', valid_from: '2025-03-01' });
    const before = await snapshot();
    const e = await rejectionOf(kgSupersede(ctx, { subject: 'a', predicate: 'p', old_object: 'old', new_object: 'new', at: '2025-02-28T23:59:59Z' }));
    expect([e.field, e.rule]).toEqual(['at', 'inverted_interval']);
    expect(await snapshot()).toEqual(before);
  });

  it('validates every field', async () => {
    const base = { subject: 'a', predicate: 'p', old_object: 'x', new_object: 'y' };
    expect((await rejectionOf(kgSupersede(ctx, { ...base, new_object: '' }))).field).toBe('new_object');
    expect((await rejectionOf(kgSupersede(ctx, { ...base, old_object: 'z'.repeat(129) }))).field).toBe('old_object');
    expect((await rejectionOf(kgSupersede(ctx, { ...base, at: '2025-13-01' }))).field).toBe('at');
    expect((await rejectionOf(kgSupersede(ctx, { ...base, predicate: 'a..b' }))).field).toBe('predicate');
    expect((await kgStats(ctx)).entities).toBe(0);
  });
});

describe('kg_query, kg_timeline, kg_stats', () => {
  beforeEach(async () => {
    await kgAdd(ctx, { subject: 'Ann', predicate: 'knows', object: 'Bob', valid_from: '2020-01-01' });
    await kgAdd(ctx, { subject: 'Cat', predicate: 'mentors', object: 'ann' });
    await kgAdd(ctx, { subject: 'Ann', predicate: 'lived_in', object: 'Paris', valid_from: '2010-01-01', valid_to: '2015-12-31' });
  });

  it('answers outgoing then incoming, echoing the queried spelling, and respects direction', async () => {
    const both = await kgQuery(ctx, { entity: 'ANN' });
    expect(both.entity).toBe('ANN');
    expect(both.as_of).toBeNull();
    expect(both.facts.map((f) => [f.direction, f.subject, f.predicate, f.object, f.current])).toEqual([
      ['outgoing', 'ANN', 'knows', 'Bob', true],
      ['outgoing', 'ANN', 'lived_in', 'Paris', false],
      ['incoming', 'Cat', 'mentors', 'ANN', true],
    ]);
    expect(both.count).toBe(3);
    expect((await kgQuery(ctx, { entity: 'Ann', direction: 'incoming' })).facts.map((f) => f.subject)).toEqual(['Cat']);
    const asOf = await kgQuery(ctx, { entity: 'Ann', as_of: '2012-06-01', direction: 'outgoing' });
    expect([asOf.as_of, asOf.facts.map((f) => f.object)]).toEqual(['2012-06-01', ['Paris']]);
  });

  it('rejects a bad direction, entity or as_of with the spec messages', async () => {
    expect((await rejectionOf(kgQuery(ctx, { entity: 'Ann', direction: 'sideways' }))).message).toBe("direction must be 'outgoing', 'incoming', or 'both'");
    expect((await rejectionOf(kgQuery(ctx, { entity: '  ' }))).message).toBe('entity must be a non-empty string');
    expect((await rejectionOf(kgQuery(ctx, { entity: 'Ann', as_of: '2020-01' }))).field).toBe('as_of');
  });

  it('lists the timeline by valid_from with undated facts last, for one entity or all', async () => {
    await kgAdd(ctx, { subject: 'Zed', predicate: 'born', object: 'Rome', valid_from: '1990-05-05' });
    const all = await kgTimeline(ctx);
    expect(all.entity).toBe('all');
    expect(all.timeline.map((t) => t.predicate)).toEqual(['born', 'lived_in', 'knows', 'mentors']);
    expect(all.count).toBe(4);
    const ann = await kgTimeline(ctx, { entity: 'ann' });
    expect(ann.entity).toBe('ann');
    expect(ann.timeline).toEqual([
      { subject: 'Ann', predicate: 'lived_in', object: 'Paris', valid_from: '2010-01-01', valid_to: '2015-12-31', current: false, ...UNOWNED },
      { subject: 'Ann', predicate: 'knows', object: 'Bob', valid_from: '2020-01-01', valid_to: null, current: true, ...UNOWNED },
      { subject: 'Cat', predicate: 'mentors', object: 'Ann', valid_from: null, valid_to: null, current: true, ...UNOWNED },
    ]);
    expect((await rejectionOf(kgTimeline(ctx, { entity: 'a\0' }))).field).toBe('entity');
  });

  it('caps the timeline at 100 facts', async () => {
    for (let i = 0; i < 105; i++) await kgAdd(ctx, { subject: 'bulk', predicate: 'has', object: `item ${i}` });
    expect((await kgTimeline(ctx)).count).toBe(100);
  });

  it('counts entities, triples, current and expired facts, and sorted relationship types', async () => {
    expect(await kgStats(ctx)).toEqual({ entities: 4, triples: 3, current_facts: 2, expired_facts: 1, relationship_types: ['knows', 'lived_in', 'mentors'] });
  });
});
