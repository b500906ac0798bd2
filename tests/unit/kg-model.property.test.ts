/**
 * Random sequences of kg add / invalidate / supersede against a small reference model of the
 * validity rules (docs/decisions.md palace 7), checked after every step: every as_of answer for every entity
 * at probe instants around each day and boundary, and the whole timeline.
 * The model measures time in epoch seconds; it shares no code with palace/kg/kg.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { palaceRejection } from '../helpers/errors.js';
import { makeTempDir, removeDir } from '../helpers/tmp.js';
import { kgAddOperation, kgInvalidateOperation, kgQueryOperation, kgSupersedeOperation, kgTimelineOperation } from '../../palace/kg/kg.js';
import { operationCall } from '../helpers/operation-call.js';
import { openSqliteGraphStore } from '../../stores/embedded/sqlite-graph-store.js';

const kgAdd = operationCall(kgAddOperation);
const kgInvalidate = operationCall(kgInvalidateOperation);
const kgQuery = operationCall(kgQueryOperation);
const kgSupersede = operationCall(kgSupersedeOperation);
const kgTimeline = operationCall(kgTimelineOperation);

const DAYS = ['2024-01-01', '2024-01-02', '2024-01-03'];
const TIMES = ['00:00:00', '11:59:59', '12:00:00', '23:59:59'];
const SUBJECTS = ['Ann', 'Bob', 'ann'];
const OBJECTS = ['X', 'Y', 'Ann'];
const PREDICATES = ['works at', 'likes'];
const QUERY_ENTITIES = ['Ann', 'Bob', 'X', 'Y'];
const NOW = new Date('2024-01-02T12:00:00Z');

const epoch = (iso: string): number => Date.parse(iso) / 1000;
const isDate = (v: string): boolean => v.length === 10;
const DAY = 86_400;

/** First instant a value covers as a start. */
const startOf = (v: string): number => (isDate(v) ? epoch(`${v}T00:00:00Z`) : epoch(v));
/** First instant no longer covered by a value used as an end. */
const endOf = (v: string): number => (isDate(v) ? epoch(`${v}T00:00:00Z`) + DAY : epoch(v));
/** Latest start an interval ending at `v` may have (a date's last second). */
const lastStartFor = (v: string): number => (isDate(v) ? epoch(`${v}T00:00:00Z`) + DAY - 1 : epoch(v));
const idOf = (name: string): string => name.toLowerCase().replaceAll(' ', '_').replaceAll("'", '');
const normPredicate = (p: string): string => p.toLowerCase().replaceAll(' ', '_');

interface ModelFact {
  s: string;
  p: string;
  o: string;
  from: string | null;
  to: string | null;
}

class Model {
  facts: ModelFact[] = [];
  names = new Map<string, string>();

  private remember(...names: string[]): void {
    for (const n of names) if (!this.names.has(idOf(n))) this.names.set(idOf(n), n);
  }

  private open(s: string, p: string, o: string): ModelFact[] {
    return this.facts.filter((f) => f.s === idOf(s) && f.p === normPredicate(p) && f.o === idOf(o) && f.to === null);
  }

  /** Returns false when the call must be rejected (nothing changes). */
  add(s: string, p: string, o: string, from: string | null, to: string | null): boolean {
    if (from !== null && to !== null && startOf(from) > lastStartFor(to)) return false;
    this.remember(s, o);
    const same = this.facts.filter((f) => f.s === idOf(s) && f.p === normPredicate(p) && f.o === idOf(o));
    const exists = to === null
      ? same.some((f) => f.to === null)
      : same.some((f) => f.to !== null && endOf(f.to) === endOf(to) && (f.from === null ? from === null : from !== null && startOf(f.from) === startOf(from)));
    if (!exists) this.facts.push({ s: idOf(s), p: normPredicate(p), o: idOf(o), from, to });
    return true;
  }

  invalidate(s: string, p: string, o: string, ended: string): boolean {
    const open = this.open(s, p, o);
    if (open.some((f) => f.from !== null && startOf(f.from) > lastStartFor(ended))) return false;
    for (const f of open) f.to = ended;
    return true;
  }

  supersede(s: string, p: string, oldO: string, newO: string, at: string): boolean {
    const boundary = isDate(at) ? `${at}T00:00:00Z` : at;
    const open = this.open(s, p, oldO);
    if (open.some((f) => f.from !== null && startOf(f.from) > epoch(boundary))) return false;
    this.remember(s, oldO, newO);
    for (const f of open) f.to = boundary;
    if (this.open(s, p, newO).length === 0) this.facts.push({ s: idOf(s), p: normPredicate(p), o: idOf(newO), from: boundary, to: null });
    return true;
  }

  validAt(f: ModelFact, t: number): boolean {
    return (f.from === null || startOf(f.from) <= t) && (f.to === null || endOf(f.to) > t);
  }

  query(entity: string, t: number | null): unknown[] {
    const id = idOf(entity);
    const shape = (f: ModelFact, direction: string) => ({
      direction,
      subject: direction === 'outgoing' ? entity : this.names.get(f.s),
      predicate: f.p,
      object: direction === 'incoming' ? entity : this.names.get(f.o),
      valid_from: f.from,
      valid_to: f.to,
      current: f.to === null,
    });
    const live = this.facts.filter((f) => t === null || this.validAt(f, t));
    return [...live.filter((f) => f.s === id).map((f) => shape(f, 'outgoing')), ...live.filter((f) => f.o === id).map((f) => shape(f, 'incoming'))];
  }

  timeline(): unknown[] {
    const withStart = this.facts.filter((f) => f.from !== null).sort((a, b) => startOf(a.from!) - startOf(b.from!));
    return [...withStart, ...this.facts.filter((f) => f.from === null)].map((f) => ({
      subject: this.names.get(f.s),
      predicate: f.p,
      object: this.names.get(f.o),
      valid_from: f.from,
      valid_to: f.to,
      current: f.to === null,
    }));
  }
}

/** Probe instants: every day boundary, the generated times, and the second before each. */
const PROBES: Array<{ text: string; t: number }> = (() => {
  const days = ['2023-12-31', ...DAYS, '2024-01-04'];
  const out: Array<{ text: string; t: number }> = [];
  for (const d of days) {
    out.push({ text: d, t: epoch(`${d}T00:00:00Z`) });
    for (const time of ['00:00:00', '00:00:01', '11:59:59', '12:00:00', '23:59:58', '23:59:59']) out.push({ text: `${d}T${time}Z`, t: epoch(`${d}T${time}Z`) });
  }
  return out;
})();

const temporalArb = fc.oneof(
  fc.constantFrom(...DAYS),
  fc.tuple(fc.constantFrom(...DAYS), fc.constantFrom(...TIMES), fc.boolean()).map(([d, t, offset]) => `${d}T${t}${offset ? '+00:00' : 'Z'}`),
);
const optionalTemporal = fc.option(temporalArb, { nil: null, freq: 3 });
/** The stored, validated form: `+00:00` becomes `Z`. */
const stored = (v: string | null): string | null => (v === null ? null : v.replace('+00:00', 'Z'));

type Op =
  | { kind: 'add'; s: string; p: string; o: string; from: string | null; to: string | null }
  | { kind: 'invalidate'; s: string; p: string; o: string; ended: string | null }
  | { kind: 'supersede'; s: string; p: string; oldO: string; newO: string; at: string | null };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('add' as const), s: fc.constantFrom(...SUBJECTS), p: fc.constantFrom(...PREDICATES), o: fc.constantFrom(...OBJECTS),
    from: optionalTemporal, to: optionalTemporal }),
  fc.record({ kind: fc.constant('invalidate' as const), s: fc.constantFrom(...SUBJECTS), p: fc.constantFrom(...PREDICATES), o: fc.constantFrom(...OBJECTS),
    ended: optionalTemporal }),
  fc.record({ kind: fc.constant('supersede' as const), s: fc.constantFrom(...SUBJECTS), p: fc.constantFrom(...PREDICATES), oldO: fc.constantFrom(...OBJECTS),
    newO: fc.constantFrom(...OBJECTS), at: optionalTemporal }),
);

function localDate(d: Date): string {
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

describe('knowledge graph against a reference model', () => {
  it('agrees on every as_of answer and the timeline after every step', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 14 }), async (ops) => {
        const dir = makeTempDir('mempalace-kgprop-');
        const graph = await openSqliteGraphStore(dir);
        const ctx = { graph, now: () => NOW };
        const model = new Model();
        try {
          for (const op of ops) {
            let ok: boolean;
            let call: Promise<unknown>;
            let field: string;
            if (op.kind === 'add') {
              ok = model.add(op.s, op.p, op.o, stored(op.from), stored(op.to));
              call = kgAdd(ctx, { subject: op.s, predicate: op.p, object: op.o, valid_from: op.from, valid_to: op.to });
              field = 'valid_to';
            } else if (op.kind === 'invalidate') {
              ok = model.invalidate(op.s, op.p, op.o, stored(op.ended) ?? localDate(NOW));
              call = kgInvalidate(ctx, { subject: op.s, predicate: op.p, object: op.o, ended: op.ended });
              field = 'ended';
            } else {
              ok = model.supersede(op.s, op.p, op.oldO, op.newO, stored(op.at) ?? '2024-01-02T12:00:00Z');
              call = kgSupersede(ctx, { subject: op.s, predicate: op.p, old_object: op.oldO, new_object: op.newO, at: op.at });
              field = 'at';
            }
            const err = await palaceRejection(call);
            if (ok) expect(err, `${JSON.stringify(op)} should succeed`).toBeUndefined();
            else expect({ field: err?.field, rule: err?.rule }).toEqual({ field, rule: 'inverted_interval' });

            for (const entity of QUERY_ENTITIES) {
              expect((await kgQuery(ctx, { entity })).facts.map(strip)).toEqual(model.query(entity, null));
              for (const probe of PROBES) {
                const got = (await kgQuery(ctx, { entity, as_of: probe.text })).facts.map(strip);
                expect(got, `${entity} as_of ${probe.text} after ${JSON.stringify(op)}`).toEqual(model.query(entity, probe.t));
              }
            }
            // The model is of validity; who made and changed facts is tested in kg-ops.test.ts.
            const timeline = (await kgTimeline(ctx)).timeline.map(({ created_by: _c, updated_by: _b, updated_at: _a, ...validity }) => validity);
            expect(timeline).toEqual(model.timeline());
          }
        } finally {
          await graph.close();
          removeDir(dir);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('never shows both or neither value at a supersede boundary, for dates and instants', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...DAYS), temporalArb, async (start, at) => {
        const dir = makeTempDir('mempalace-kgprop-');
        const graph = await openSqliteGraphStore(dir);
        const ctx = { graph, now: () => NOW };
        try {
          await kgAdd(ctx, { subject: 'Bot', predicate: 'uses', object: 'Old', valid_from: start });
          const err = await palaceRejection(kgSupersede(ctx, { subject: 'Bot', predicate: 'uses', old_object: 'Old', new_object: 'New', at }));
          const boundary = epoch(isDate(at) ? `${at}T00:00:00Z` : at.replace('+00:00', 'Z'));
          if (boundary < startOf(start)) {
            expect(err?.rule).toBe('inverted_interval');
            return;
          }
          expect(err).toBeUndefined();
          const objectsAt = async (t: number) =>
            (await kgQuery(ctx, { entity: 'Bot', as_of: new Date(t * 1000).toISOString().slice(0, 19) + 'Z' })).facts.map((f) => f.object);
          expect(await objectsAt(boundary)).toEqual(['New']);
          expect(await objectsAt(boundary + 1)).toEqual(['New']);
          if (boundary - 1 >= startOf(start)) expect(await objectsAt(boundary - 1)).toEqual(['Old']);
        } finally {
          await graph.close();
          removeDir(dir);
        }
      }),
      { numRuns: 40 },
    );
  });
});

function strip(
  f: { direction: string; subject: string; predicate: string; object: string; valid_from: string | null; valid_to: string | null; current: boolean },
): unknown {
  return { direction: f.direction, subject: f.subject, predicate: f.predicate, object: f.object, valid_from: f.valid_from, valid_to: f.valid_to,
    current: f.current };
}
