/**
 * The GraphStore contract: what every adapter (SQLite now, Neo4j later) must do identically.
 * Written against the port only; each adapter's test file calls `describeGraphStoreContract`.
 */
import { describe, expect, it } from 'vitest';
import type { GraphStore, HallwayWrite, KgEntityRef, KgTripleWrite, TunnelWrite } from '../../stores/ports/graph-store.js';
import { kgFact } from '../helpers/kg.js';
import { openForEachTest } from '../helpers/each-test.js';
import { newTunnel } from '../helpers/tunnels.js';

export interface OpenedGraphStore {
  graph: GraphStore;
  cleanup(): Promise<void>;
}

/** A change by nobody known, where who changed a fact is not what a test looks at. */
const NO_CHANGE = { updated_by: null, updated_at: null };

const ent = (name: string): KgEntityRef => ({ id: name.toLowerCase().replaceAll(' ', '_'), name });

let seq = 0;
/** A triple with explicit keys; `recorded_at` increases with every call so order is known. */
function triple(s: string, p: string, o: string, v: { from?: string; to?: string; id?: string } = {}): KgTripleWrite {
  seq += 1;
  const recorded = `2030-01-01T00:00:00.${String(seq).padStart(6, '0')}Z`;
  return kgFact({
    id: v.id ?? `t_${ent(s).id}_${p}_${ent(o).id}_${String(seq).padStart(12, '0')}`,
    subject: ent(s),
    predicate: p,
    object: ent(o),
    valid_from: v.from ?? null,
    valid_to: v.to ?? null,
    from_key: v.from ?? null,
    to_key: v.to ?? null,
    recorded_at: recorded,
  });
}

function tunnel(id: string, a: [string, string], b: [string, string], at: string, extra: Partial<TunnelWrite> = {}): TunnelWrite {
  return {
    id,
    source: { wing: a[0], room: a[1] },
    target: { wing: b[0], room: b[1] },
    label: '',
    kind: 'explicit',
    source_wing_key: a[0].toLowerCase(),
    target_wing_key: b[0].toLowerCase(),
    at,
    by: null,
    ...extra,
  };
}

function hallway(wing: string, a: string, b: string, count: number, createdAt: string): HallwayWrite {
  return {
    id: `hallway_${wing}_${a}_${b}`,
    wing,
    entity_a: a,
    entity_b: b,
    co_occurrence_count: count,
    rooms: ['r1', 'r2'],
    label: `${a} ↔ ${b}`,
    created_at: createdAt,
    created_by: 'auto',
  };
}

export function describeGraphStoreContract(adapterName: string, open: () => Promise<OpenedGraphStore>): void {
  describe(`GraphStore contract: ${adapterName}`, () => {
    let g: GraphStore;
    openForEachTest(open, (opened) => (g = opened.graph));

    describe('kgAdd', () => {
      it('stores a fact, creates both entities with their first spelling, and returns it in both directions', async () => {
        const t = triple('Max Smith', 'works_at', 'Acme', { from: '2020-01-01T00:00:00Z' });
        expect(await g.kgAdd(t)).toEqual({ triple_id: t.id, inserted: true });
        await g.kgAdd(triple('max smith', 'likes', 'Tea'));
        const out = await g.kgFacts({ entity_id: 'max_smith', direction: 'outgoing' });
        expect(out.map((f) => [f.direction, f.subject_name, f.predicate, f.object_name])).toEqual([
          ['outgoing', 'Max Smith', 'works_at', 'Acme'],
          ['outgoing', 'Max Smith', 'likes', 'Tea'],
        ]);
        expect(out[0]).toMatchObject({ id: t.id, subject_id: 'max_smith', object_id: 'acme', valid_from: '2020-01-01T00:00:00Z', valid_to: null, confidence: 1,
          recorded_at: t.recorded_at });
        const inc = await g.kgFacts({ entity_id: 'acme', direction: 'incoming' });
        expect(inc.map((f) => [f.direction, f.id])).toEqual([['incoming', t.id]]);
        expect((await g.kgStats()).entities).toBe(3);
      });

      it('keeps provenance fields verbatim', async () => {
        const t = { ...triple('A', 'p', 'B'), confidence: 0.25, source_closet: 'closet_1', source_file: '/x/y.md', source_drawer_id: 'drawer_w_r_1',
          adapter_name: 'extractor' };
        await g.kgAdd(t);
        const [f] = await g.kgFacts({ entity_id: 'a', direction: 'outgoing' });
        expect(f).toMatchObject({ confidence: 0.25, source_closet: 'closet_1', source_file: '/x/y.md', source_drawer_id: 'drawer_w_r_1',
          adapter_name: 'extractor' });
      });

      it('records who added a fact, and no change yet', async () => {
        const byAlice = { ...triple('A', 'p', 'B'), created_by: 'alice' };
        await g.kgAdd(byAlice);
        await g.kgAdd(triple('A', 'q', 'C'));
        const facts = await g.kgFacts({ entity_id: 'a', direction: 'outgoing' });
        expect(facts.map((f) => [f.id, f.created_by, f.updated_by, f.updated_at])).toEqual([[byAlice.id, 'alice', null, null], [facts[1]!.id, null, null,
          null]]);
        expect((await g.kgTimeline({ entity_id: 'a', limit: 10 }))[0]).toMatchObject({ created_by: 'alice', updated_by: null, updated_at: null });
      });

      it('returns the existing id for an identical open fact and writes nothing', async () => {
        const first = triple('A', 'p', 'B', { from: '2020-01-01T00:00:00Z' });
        await g.kgAdd(first);
        const again = triple('A', 'p', 'B', { from: '2021-01-01T00:00:00Z' });
        expect(await g.kgAdd(again)).toEqual({ triple_id: first.id, inserted: false });
        expect((await g.kgStats()).triples).toBe(1);
      });

      it('stores a closed backfill beside an open identical fact, once per interval', async () => {
        const open1 = triple('A', 'p', 'B', { from: '2022-01-01T00:00:00Z' });
        await g.kgAdd(open1);
        const past = triple('A', 'p', 'B', { from: '2019-01-01T00:00:00Z', to: '2020-01-01T00:00:00Z' });
        expect(await g.kgAdd(past)).toEqual({ triple_id: past.id, inserted: true });
        const samePast = triple('A', 'p', 'B', { from: '2019-01-01T00:00:00Z', to: '2020-01-01T00:00:00Z' });
        expect(await g.kgAdd(samePast)).toEqual({ triple_id: past.id, inserted: false });
        expect((await g.kgStats()).triples).toBe(2);
      });

      it('lets an expired identical fact not block a new open one', async () => {
        await g.kgAdd(triple('A', 'p', 'B', { from: '2019-01-01T00:00:00Z', to: '2020-01-01T00:00:00Z' }));
        const now = triple('A', 'p', 'B');
        expect(await g.kgAdd(now)).toEqual({ triple_id: now.id, inserted: true });
      });
    });

    describe('kgFacts', () => {
      it('puts outgoing before incoming, each in storage order, and lists a self-loop on both sides', async () => {
        const t1 = triple('X', 'in', 'A');
        const t2 = triple('A', 'p', 'B');
        const t3 = triple('A', 'self', 'A');
        const t4 = triple('A', 'q', 'C');
        for (const t of [t1, t2, t3, t4]) await g.kgAdd(t);
        const facts = await g.kgFacts({ entity_id: 'a', direction: 'both' });
        expect(facts.map((f) => [f.direction, f.id])).toEqual([
          ['outgoing', t2.id],
          ['outgoing', t3.id],
          ['outgoing', t4.id],
          ['incoming', t1.id],
          ['incoming', t3.id],
        ]);
      });

      it('filters half-open: from_key <= t < to_key, null bounds open-ended', async () => {
        const always = triple('A', 'always', 'B');
        const since = triple('A', 'since', 'B', { from: '2024-01-01T00:00:00Z' });
        const until = triple('A', 'until', 'B', { to: '2024-01-01T00:00:00Z' });
        const window = triple('A', 'window', 'B', { from: '2023-01-01T00:00:00Z', to: '2024-01-01T00:00:00Z' });
        for (const t of [always, since, until, window]) await g.kgAdd(t);
        const at = async (t: string) => (await g.kgFacts({ entity_id: 'a', direction: 'outgoing', as_of_key: t })).map((f) => f.predicate);
        expect(await at('2022-06-01T00:00:00Z')).toEqual(['always', 'until']);
        expect(await at('2023-12-31T23:59:59Z')).toEqual(['always', 'until', 'window']);
        expect(await at('2024-01-01T00:00:00Z')).toEqual(['always', 'since']);
        expect((await g.kgFacts({ entity_id: 'a', direction: 'outgoing' })).length).toBe(4);
      });

      it('returns nothing for an unknown entity', async () => {
        expect(await g.kgFacts({ entity_id: 'nobody', direction: 'both' })).toEqual([]);
      });
    });

    describe('kgInvalidate', () => {
      it('closes every open match and leaves closed ones alone', async () => {
        const closed = triple('A', 'p', 'B', { from: '2018-01-01T00:00:00Z', to: '2019-01-01T00:00:00Z' });
        const open1 = triple('A', 'p', 'B', { from: '2020-01-01T00:00:00Z' });
        await g.kgAdd(closed);
        await g.kgAdd(open1);
        const r = await g.kgInvalidate({ subject_id: 'a', predicate: 'p', object_id: 'b', ended: '2021-05-05', ended_key: '2021-05-06T00:00:00Z',
          max_from_key: '2021-05-05T23:59:59Z', change: NO_CHANGE });
        expect(r).toEqual({ status: 'ok', closed: 1 });
        const facts = await g.kgFacts({ entity_id: 'a', direction: 'outgoing' });
        expect(facts.map((f) => [f.id, f.valid_to, f.to_key])).toEqual([
          [closed.id, '2019-01-01T00:00:00Z', '2019-01-01T00:00:00Z'],
          [open1.id, '2021-05-05', '2021-05-06T00:00:00Z'],
        ]);
      });

      it("kgSetEnd sets one fact's end verbatim, reopens it with null, and reports an unknown id", async () => {
        const fact = triple('A', 'p', 'B', { from: '2020-01-01T00:00:00Z' });
        await g.kgAdd(fact);
        expect(await g.kgSetEnd({ id: fact.id, valid_to: '2021-05-05', to_key: '2021-05-06T00:00:00Z', ...NO_CHANGE })).toBe(true);
        expect((await g.kgFacts({ entity_id: 'a', direction: 'outgoing' })).map((f) => [f.valid_to, f.to_key])).toEqual([['2021-05-05',
          '2021-05-06T00:00:00Z']]);
        expect(await g.kgSetEnd({ id: fact.id, valid_to: null, to_key: null, ...NO_CHANGE })).toBe(true);
        expect((await g.kgFacts({ entity_id: 'a', direction: 'outgoing', as_of_key: '2030-01-01T00:00:00Z' })).map((f) => f.id)).toEqual([fact.id]);
        expect(await g.kgSetEnd({ id: 'no_such_fact', valid_to: null, to_key: null, ...NO_CHANGE })).toBe(false);
      });

      it("records the change on every fact it closes, keeping who added it, and leaves other facts' changes alone", async () => {
        const closed = { ...triple('A', 'p', 'B', { from: '2018-01-01T00:00:00Z', to: '2019-01-01T00:00:00Z' }), created_by: 'alice' };
        const open1 = { ...triple('A', 'p', 'B', { from: '2020-01-01T00:00:00Z' }), created_by: 'alice' };
        await g.kgAdd(closed);
        await g.kgAdd(open1);
        await g.kgInvalidate({ subject_id: 'a', predicate: 'p', object_id: 'b', ended: '2021-05-05', ended_key: '2021-05-06T00:00:00Z',
          max_from_key: '2021-05-05T23:59:59Z', change: { updated_by: 'bob', updated_at: '2030-03-01T00:00:00.000001Z' } });
        const facts = await g.kgFacts({ entity_id: 'a', direction: 'outgoing' });
        expect(facts.map((f) => [f.id, f.created_by, f.updated_by, f.updated_at])).toEqual([
          [closed.id, 'alice', null, null],
          [open1.id, 'alice', 'bob', '2030-03-01T00:00:00.000001Z'],
        ]);
      });

      it('kgSetEnd puts back who changed a fact verbatim, none included', async () => {
        const fact = { ...triple('A', 'p', 'B'), created_by: 'alice' };
        await g.kgAdd(fact);
        await g.kgSetEnd({ id: fact.id, valid_to: '2021-05-05', to_key: '2021-05-06T00:00:00Z', updated_by: 'bob', updated_at: '2030-03-01T00:00:00Z' });
        const changed = async () => (await g.kgFacts({ entity_id: 'a', direction: 'outgoing' })).map((f) => [f.created_by, f.updated_by, f.updated_at]);
        expect(await changed()).toEqual([['alice', 'bob', '2030-03-01T00:00:00Z']]);
        await g.kgSetEnd({ id: fact.id, valid_to: null, to_key: null, ...NO_CHANGE });
        expect(await changed()).toEqual([['alice', null, null]]);
      });

      it('is a no-op without a match', async () => {
        expect(
          await g.kgInvalidate({ subject_id: 'a', predicate: 'p', object_id: 'b', ended: '2021-01-01T00:00:00Z', ended_key: '2021-01-01T00:00:00Z',
            max_from_key: '2021-01-01T00:00:00Z', change: NO_CHANGE }),
        ).toEqual({ status: 'ok', closed: 0 });
      });

      it('reports an open fact starting after max_from_key and writes nothing', async () => {
        const early = triple('A', 'p', 'B', { from: '2020-01-01T00:00:00Z' });
        await g.kgAdd(early);
        const r = await g.kgInvalidate({ subject_id: 'a', predicate: 'p', object_id: 'b', ended: '2019-01-01T00:00:00Z', ended_key: '2019-01-01T00:00:00Z',
          max_from_key: '2019-01-01T00:00:00Z', change: NO_CHANGE });
        expect(r).toEqual({ status: 'inverted', triple_id: early.id, valid_from: '2020-01-01T00:00:00Z' });
        expect((await g.kgFacts({ entity_id: 'a', direction: 'outgoing' }))[0]!.valid_to).toBeNull();
        // A start equal to max_from_key is allowed.
        expect(
          await g.kgInvalidate({ subject_id: 'a', predicate: 'p', object_id: 'b', ended: '2020-01-01T00:00:00Z', ended_key: '2020-01-01T00:00:00Z',
            max_from_key: '2020-01-01T00:00:00Z', change: NO_CHANGE }),
        ).toEqual({ status: 'ok', closed: 1 });
      });
    });

    describe('kgSupersede', () => {
      it('closes the old fact and opens the new one at the same boundary', async () => {
        const old = triple('Bot', 'uses_model', 'M1', { from: '2024-01-01T00:00:00Z' });
        await g.kgAdd(old);
        const next = triple('Bot', 'uses_model', 'M2', { from: '2024-06-01T12:00:00Z' });
        const r = await g.kgSupersede({ old_object: ent('M1'), successor: next });
        expect(r).toEqual({ status: 'ok', triple_id: next.id, inserted: true, closed: 1 });
        const at = async (t: string) => (await g.kgFacts({ entity_id: 'bot', direction: 'outgoing', as_of_key: t })).map((f) => f.object_name);
        expect(await at('2024-06-01T11:59:59Z')).toEqual(['M1']);
        expect(await at('2024-06-01T12:00:00Z')).toEqual(['M2']);
        const all = await g.kgFacts({ entity_id: 'bot', direction: 'outgoing' });
        expect(all.map((f) => [f.object_name, f.valid_from, f.valid_to])).toEqual([
          ['M1', '2024-01-01T00:00:00Z', '2024-06-01T12:00:00Z'],
          ['M2', '2024-06-01T12:00:00Z', null],
        ]);
      });

      it("records the successor's creator as who changed the closed fact, at its recorded_at", async () => {
        const old = { ...triple('Bot', 'uses_model', 'M1', { from: '2024-01-01T00:00:00Z' }), created_by: 'alice' };
        await g.kgAdd(old);
        const next = { ...triple('Bot', 'uses_model', 'M2', { from: '2024-06-01T12:00:00Z' }), created_by: 'bob' };
        await g.kgSupersede({ old_object: ent('M1'), successor: next });
        const all = await g.kgFacts({ entity_id: 'bot', direction: 'outgoing' });
        expect(all.map((f) => [f.object_name, f.created_by, f.updated_by, f.updated_at])).toEqual([
          ['M1', 'alice', 'bob', next.recorded_at],
          ['M2', 'bob', null, null],
        ]);
      });

      it('opens the new fact without an old one and creates all three entities', async () => {
        const next = triple('Bot', 'uses_model', 'M2', { from: '2024-06-01T00:00:00Z' });
        expect(await g.kgSupersede({ old_object: ent('M1'), successor: next })).toEqual({ status: 'ok', triple_id: next.id, inserted: true, closed: 0 });
        expect(await g.kgStats()).toMatchObject({ entities: 3, triples: 1 });
      });

      it('returns an already open new fact instead of inserting', async () => {
        const existing = triple('Bot', 'uses_model', 'M2');
        await g.kgAdd(existing);
        await g.kgAdd(triple('Bot', 'uses_model', 'M1'));
        const r = await g.kgSupersede({ old_object: ent('M1'), successor: triple('Bot', 'uses_model', 'M2', { from: '2025-01-01T00:00:00Z' }) });
        expect(r).toEqual({ status: 'ok', triple_id: existing.id, inserted: false, closed: 1 });
        expect((await g.kgStats()).triples).toBe(2);
      });

      it('writes nothing, not even entities, when an old fact starts after the boundary', async () => {
        const old = triple('Bot', 'uses_model', 'M1', { from: '2025-01-01T00:00:00Z' });
        await g.kgAdd(old);
        const r = await g.kgSupersede({ old_object: ent('M1'), successor: triple('Bot', 'uses_model', 'Brand New', { from: '2024-01-01T00:00:00Z' }) });
        expect(r).toEqual({ status: 'inverted', triple_id: old.id, valid_from: '2025-01-01T00:00:00Z' });
        expect(await g.kgStats()).toMatchObject({ entities: 2, triples: 1, current_facts: 1 });
      });
    });

    describe('kgTimeline and kgStats', () => {
      it('orders by from_key with nulls last, then storage order, filtered by entity and limited', async () => {
        const noStart = triple('A', 'p', 'B');
        const late = triple('A', 'q', 'C', { from: '2024-01-01T00:00:00Z' });
        const early = triple('D', 'r', 'A', { from: '2020-01-01T00:00:00Z' });
        const lateToo = triple('A', 's', 'E', { from: '2024-01-01T00:00:00Z' });
        const other = triple('X', 'p', 'Y', { from: '2000-01-01T00:00:00Z' });
        for (const t of [noStart, late, early, lateToo, other]) await g.kgAdd(t);
        expect((await g.kgTimeline({ entity_id: 'a', limit: 100 })).map((t) => t.id)).toEqual([early.id, late.id, lateToo.id, noStart.id]);
        expect((await g.kgTimeline({ limit: 100 })).map((t) => t.id)).toEqual([other.id, early.id, late.id, lateToo.id, noStart.id]);
        expect((await g.kgTimeline({ limit: 2 })).map((t) => t.id)).toEqual([other.id, early.id]);
        const [first] = await g.kgTimeline({ entity_id: 'a', limit: 1 });
        expect(first).toMatchObject({ subject_name: 'D', object_name: 'A', predicate: 'r' });
      });

      it('counts entities, triples, current facts and sorted distinct predicates', async () => {
        expect(await g.kgStats()).toEqual({ entities: 0, triples: 0, current_facts: 0, relationship_types: [] });
        await g.kgAdd(triple('A', 'zeta', 'B'));
        await g.kgAdd(triple('A', 'alpha', 'C', { from: '2020-01-01T00:00:00Z', to: '2021-01-01T00:00:00Z' }));
        await g.kgAdd(triple('C', 'alpha', 'B'));
        expect(await g.kgStats()).toEqual({ entities: 3, triples: 3, current_facts: 2, relationship_types: ['alpha', 'zeta'] });
      });
    });

    describe('tunnels', () => {
      it('creates with default dynamics and lists in (created_at, id) order', async () => {
        const [t1] = await g.tunnelUpsert([tunnel('bbbb', ['W1', 'r1'], ['W2', 'r2'], '2030-01-01T00:00:00.000001+00:00', { label: 'one' })]);
        expect(t1).toEqual(
          newTunnel({ id: 'bbbb', source: { wing: 'W1', room: 'r1' }, target: { wing: 'W2', room: 'r2' }, label: 'one', kind: 'explicit' },
            '2030-01-01T00:00:00.000001+00:00'),
        );
        await g.tunnelUpsert([
          tunnel('cccc', ['W3', 'r3'], ['W1', 'r9'], '2030-01-01T00:00:00.000002+00:00'),
          tunnel('aaaa', ['W4', 'r4'], ['W5', 'r5'], '2030-01-01T00:00:00.000002+00:00'),
        ]);
        expect((await g.tunnelList()).map((t) => t.id)).toEqual(['bbbb', 'aaaa', 'cccc']);
        expect(await g.tunnelCount()).toBe(3);
      });

      it('updates an existing id in place: new endpoints, label, kind and updated_at; created_at and dynamics kept', async () => {
        await g.tunnelUpsert([tunnel('t1', ['W1', 'r1'], ['W2', 'r2'], '2030-01-01T00:00:00.000001+00:00', { label: 'old' })]);
        await g.tunnelUpsert([tunnel('t2', ['W3', 'r3'], ['W4', 'r4'], '2030-01-01T00:00:00.000002+00:00')]);
        const [updated] = await g.tunnelUpsert([
          {
            ...tunnel('t1', ['W2', 'r2'], ['W1', 'r1'], '2030-02-01T00:00:00.000000+00:00', { label: 'new', kind: 'topic' }),
            source: { wing: 'W2', room: 'r2', drawer_id: 'd2' },
          },
        ]);
        expect(updated).toEqual({
          id: 't1',
          source: { wing: 'W2', room: 'r2', drawer_id: 'd2' },
          target: { wing: 'W1', room: 'r1' },
          label: 'new',
          kind: 'topic',
          created_at: '2030-01-01T00:00:00.000001+00:00',
          updated_at: '2030-02-01T00:00:00.000000+00:00',
          strength: 1,
          stability: 1,
          last_activated: '2030-01-01T00:00:00.000001+00:00',
          access_count: 0,
        });
        expect((await g.tunnelList()).map((t) => t.id)).toEqual(['t1', 't2']);
        expect(await g.tunnelCount()).toBe(2);
      });

      it('records who created a tunnel and who last changed it; a change by nobody known leaves no changer', async () => {
        const at = (n: number) => `2030-01-0${n}T00:00:00.000000+00:00`;
        const [created] = await g.tunnelUpsert([tunnel('t1', ['W1', 'r1'], ['W2', 'r2'], at(1), { by: 'alice' })]);
        expect(created).toEqual(
          newTunnel({ id: 't1', source: { wing: 'W1', room: 'r1' }, target: { wing: 'W2', room: 'r2' }, label: '', kind: 'explicit', created_by: 'alice' },
            at(1)),
        );
        const [changed] = await g.tunnelUpsert([tunnel('t1', ['W1', 'r1'], ['W2', 'r2'], at(2), { label: 'relabelled', by: 'bob' })]);
        expect(changed).toMatchObject({ created_at: at(1), created_by: 'alice', updated_at: at(2), updated_by: 'bob', label: 'relabelled' });
        const [unknown] = await g.tunnelUpsert([tunnel('t1', ['W1', 'r1'], ['W2', 'r2'], at(3))]);
        expect(unknown).toMatchObject({ created_by: 'alice', updated_at: at(3) });
        expect(unknown).not.toHaveProperty('updated_by');
        const [made] = await g.tunnelUpsert([tunnel('t2', ['W3', 'r3'], ['W4', 'r4'], at(4))]);
        expect(made).not.toHaveProperty('created_by');
        expect(await g.tunnelList()).toEqual([unknown, made]);
      });

      it('restores tunnels verbatim, who created and changed them included, and drops what the record leaves out', async () => {
        const at = '2030-01-01T00:00:00.000000+00:00';
        await g.tunnelUpsert([tunnel('t1', ['W1', 'r1'], ['W2', 'r2'], at, { by: 'carol' })]);
        await g.tunnelUpsert([tunnel('t1', ['W1', 'r1'], ['W2', 'r2'], '2030-01-02T00:00:00.000000+00:00', { by: 'dave' })]);
        const restored = {
          ...newTunnel({ id: 't1', source: { wing: 'W1', room: 'r1' }, target: { wing: 'W2', room: 'r2' }, label: 'back', kind: 'explicit',
            created_by: 'alice' }, at),
          updated_at: '2030-01-03T00:00:00.000000+00:00',
          updated_by: 'bob',
        };
        await g.tunnelRestore([{ ...restored, source_wing_key: 'w1', target_wing_key: 'w2' }]);
        expect(await g.tunnelList()).toEqual([restored]);
        const { created_by: _c, updated_at: _a, updated_by: _b, ...unowned } = restored;
        await g.tunnelRestore([{ ...unowned, source_wing_key: 'w1', target_wing_key: 'w2' }]);
        expect(await g.tunnelList()).toEqual([unowned]);
      });

      it('filters by wing key on either endpoint, and by room on the same endpoint', async () => {
        await g.tunnelUpsert([
          tunnel('t1', ['alpha', 'r1'], ['beta', 'r2'], '2030-01-01T00:00:00.000001+00:00'),
          tunnel('t2', ['gamma', 'r2'], ['alpha', 'r3'], '2030-01-01T00:00:00.000002+00:00'),
          tunnel('t3', ['beta', 'r1'], ['gamma', 'r1'], '2030-01-01T00:00:00.000003+00:00'),
        ]);
        const ids = async (f: { wing_key?: string; room?: string }) => (await g.tunnelList(f)).map((t) => t.id);
        expect(await ids({ wing_key: 'alpha' })).toEqual(['t1', 't2']);
        expect(await ids({ wing_key: 'alpha', room: 'r3' })).toEqual(['t2']);
        expect(await ids({ wing_key: 'beta', room: 'r2' })).toEqual(['t1']);
        // room r1 is on gamma's endpoint of t3, not on a gamma endpoint with room r2
        expect(await ids({ wing_key: 'gamma', room: 'r2' })).toEqual(['t2']);
        expect(await ids({ wing_key: 'nobody' })).toEqual([]);
      });

      it('deletes by id and says whether something was removed', async () => {
        await g.tunnelUpsert([tunnel('t1', ['a', 'r'], ['b', 'r'], '2030-01-01T00:00:00.000001+00:00')]);
        expect(await g.tunnelDelete('t1')).toBe(true);
        expect(await g.tunnelDelete('t1')).toBe(false);
        expect(await g.tunnelList()).toEqual([]);
      });

      it('serialises concurrent upserts of one id into one record', async () => {
        const writes = Array.from({ length: 20 },
          (_, i) => tunnel('same', ['a', 'r'], ['b', 'r'], `2030-01-01T00:00:00.${String(i + 1).padStart(6, '0')}+00:00`, { label: `l${i}` }));
        await Promise.all(writes.map((w) => g.tunnelUpsert([w])));
        const list = await g.tunnelList();
        expect(list).toHaveLength(1);
        expect(list[0]!.created_at < list[0]!.updated_at!).toBe(true);
      });
    });

    describe('hallways', () => {
      it('replaces one wing, keeps other wings, and keeps dynamics of records whose id survives', async () => {
        await g.hallwaysReplaceWing('w1', [hallway('w1', 'Amy', 'Bob', 2, '2030-01-01T00:00:00+00:00'),
          hallway('w1', 'Amy', 'Cat', 3, '2030-01-01T00:00:00+00:00')]);
        await g.hallwaysReplaceWing('w2', [hallway('w2', 'Amy', 'Bob', 5, '2030-01-01T00:00:00+00:00')]);
        const replaced = await g.hallwaysReplaceWing('w1', [hallway('w1', 'Amy', 'Bob', 4, '2030-03-01T00:00:00+00:00'),
          hallway('w1', 'Bob', 'Dan', 2, '2030-03-01T00:00:00+00:00')]);
        expect(replaced.map((h) => [h.id, h.co_occurrence_count, h.created_at, h.last_activated])).toEqual([
          ['hallway_w1_Amy_Bob', 4, '2030-03-01T00:00:00+00:00', '2030-01-01T00:00:00+00:00'],
          ['hallway_w1_Bob_Dan', 2, '2030-03-01T00:00:00+00:00', '2030-03-01T00:00:00+00:00'],
        ]);
        const all = await g.hallwayList();
        expect(all.map((h) => h.id)).toEqual(['hallway_w1_Amy_Bob', 'hallway_w1_Bob_Dan', 'hallway_w2_Amy_Bob']);
        expect(all[0]).toEqual({ ...hallway('w1', 'Amy', 'Bob', 4, '2030-03-01T00:00:00+00:00'), strength: 1, stability: 1,
          last_activated: '2030-01-01T00:00:00+00:00', access_count: 0 });
        expect((await g.hallwayList('w2')).map((h) => h.co_occurrence_count)).toEqual([5]);
        expect(await g.hallwayList('W2')).toEqual([]);
      });

      it('empties a wing when replaced with nothing, and deletes by id', async () => {
        await g.hallwaysReplaceWing('w1', [hallway('w1', 'Amy', 'Bob', 2, '2030-01-01T00:00:00+00:00')]);
        await g.hallwaysReplaceWing('w2', [hallway('w2', 'Amy', 'Bob', 2, '2030-01-01T00:00:00+00:00')]);
        await g.hallwaysReplaceWing('w1', []);
        expect((await g.hallwayList()).map((h) => h.wing)).toEqual(['w2']);
        expect(await g.hallwayDelete('hallway_w2_Amy_Bob')).toBe(true);
        expect(await g.hallwayDelete('hallway_w2_Amy_Bob')).toBe(false);
        expect(await g.hallwayList()).toEqual([]);
      });
    });
  });
}
