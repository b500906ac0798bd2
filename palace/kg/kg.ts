/**
 * The temporal knowledge graph (docs/palace-behaviour.md §10, docs/tools.md §4): validation, entity and
 * predicate normalisation, validity keys and result shapes. Validity is half-open at the
 * instant level (docs/decisions.md palace 7): a date-only start means 00:00:00Z of that day, a date-only end
 * covers the whole day (it ends at 00:00:00Z of the next), and a supersede boundary belongs to
 * the new fact only.
 */
import { Type } from 'typebox';
import type { Static } from 'typebox';
import { invalidArgument, PalaceError } from '../../core/errors.js';
import { INPUT_FORMATS, NON_BLANK, nullable } from '../../core/schema.js';
import { hashN, lengthPrefixed } from '../../core/text.js';
import { NAME_RULES, validateKgValue, validateOptionalText, validateTemporal } from '../../core/validate.js';
import type { GraphStore, KgEntityRef, KgInvertedInterval, KgTriple, KgTripleWrite } from '../../stores/ports/graph-store.js';
import { callActor, nowOf } from '../context.js';
import type { CallActor } from '../context.js';
import { defineOperation } from '../operation.js';
import type { Runtime } from '../runtime.js';

/** `actor`: who adds a fact is its `created_by`, who ends one its `updated_by`. */
export interface KgContext extends CallActor {
  graph: GraphStore;
  /** Injectable clock (tests pin "now" and "today"). */
  now?: () => Date;
}

const KG_TIMELINE_LIMIT = 100;
const DIRECTIONS = ['outgoing', 'incoming', 'both'] as const;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

// ---------------------------------------------------------------------------------------------
// Keys and identities

/** Comparison key of a start (`valid_from`, `as_of`, `at`): a date means its first instant. */
export function startKey(value: string): string {
  return DATE_ONLY.test(value) ? `${value}T00:00:00Z` : value;
}

/** Comparison key of an end (`valid_to`, `ended`): a date covers the whole day, exclusive end. */
export function endKey(value: string): string {
  if (!DATE_ONLY.test(value)) return value;
  const next = new Date(`${value}T00:00:00Z`);
  next.setUTCDate(next.getUTCDate() + 1);
  return `${next.toISOString().slice(0, 10)}T00:00:00Z`;
}

/**
 * The latest start an interval ending at `value` may have without being inverted (docs/palace-behaviour.md §10.4 step 1):
 * the instant itself, or for a date its last second (the spec's `DT23:59:59Z` end key).
 */
export function latestStartKey(value: string): string {
  return DATE_ONLY.test(value) ? `${value}T23:59:59Z` : value;
}

/** Entity id (docs/palace-behaviour.md §10.2): lowercase, spaces to `_`, apostrophes removed; nothing else changes. */
export function entityId(name: string): string {
  return name.toLowerCase().replaceAll(' ', '_').replaceAll("'", '');
}

/** Stored predicate (docs/palace-behaviour.md §10.2): lowercase, spaces to `_`. */
export function normalisePredicate(predicate: string): string {
  return predicate.toLowerCase().replaceAll(' ', '_');
}

export function tripleId(subjectId: string, predicate: string, objectId: string, validFrom: string | null, recordedAt: string): string {
  return `t_${subjectId}_${predicate}_${objectId}_${hashN(lengthPrefixed([validFrom ?? 'None', recordedAt]), 12)}`;
}

function factText(subject: string, predicate: string, object: string): string {
  return `${subject} → ${predicate} → ${object}`;
}

let lastMicros = 0n;

/**
 * A UTC instant with microseconds (`YYYY-MM-DDTHH:MM:SS.ffffffZ`), strictly increasing within
 * this process, so records made in one millisecond still get distinct ids and a stable order.
 */
export function recordedAt(now: Date): string {
  let micros = BigInt(now.getTime()) * 1000n;
  if (micros <= lastMicros) micros = lastMicros + 1n;
  lastMicros = micros;
  const ms = Number(micros / 1000n);
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 19)}.${String(micros % 1_000_000n).padStart(6, '0')}Z`;
}

/** Current UTC instant at second precision, the TEMPORAL instant form. */
function utcSecond(now: Date): string {
  return `${now.toISOString().slice(0, 19)}Z`;
}

/** The server's local calendar date (the spec's default for `ended`). */
function localDate(now: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${now.getFullYear()}-${p(now.getMonth() + 1)}-${p(now.getDate())}`;
}

// ---------------------------------------------------------------------------------------------
// Validation helpers

/** Optional free text (provenance): null when absent or blank. */
function optionalText(field: string, value: string | undefined, max: number): string | null {
  return validateOptionalText(field, value, max) ?? null;
}

function confidenceOf(value: number | undefined): number {
  if (value === undefined) return 1.0;
  if (!Number.isFinite(value) || value < 0 || value > 1) throw invalidArgument('confidence', 'range', 'confidence must be a number between 0 and 1');
  return value;
}

/** A domain error of the graph (docs/tools.md §4: surfaces as JSON-RPC -32000, `ValueError`). */
function invertedInterval(field: string, end: string, start: string | null): PalaceError {
  return new PalaceError('invalid_argument', `${field}=${end} is earlier than valid_from=${String(start)}: inverted interval would be invisible to every query`,
    {
      field,
      rule: 'inverted_interval',
      details: { error_class: 'ValueError' },
    });
}

function rejectIfInverted<T extends { status: string }>(field: string, end: string, result: T | KgInvertedInterval): asserts result is T {
  if (result.status === 'inverted') throw invertedInterval(field, end, (result as KgInvertedInterval).valid_from);
}

// ---------------------------------------------------------------------------------------------
// Operations (docs/tools.md §4)

const kgContext = (rt: Runtime): KgContext => ({ graph: rt.stores.graph, ...callActor(rt) });
const DATE_HINT = 'YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ';
/** A subject, object or entity: trimmed, at most 128 code points (or unbounded as a lookup key), no NUL. */
const kgValue = (description: string) => Type.String({ description, pattern: NON_BLANK });
/** A NAME (the predicate): its rules are the palace-name format. */
const kgName = (description: string) => Type.String({ description, pattern: NON_BLANK, format: INPUT_FORMATS.name });
/** A TEMPORAL value (`validateTemporal`): a date or a UTC instant; empty means absent. */
const temporal = (description: string) => Type.Optional(Type.String({ description }));
/** What a KG value may break beyond being a non-blank string (checked in `run` by validateKgValue). */
const KG_VALUE_RULES = ['max_length', 'null_bytes'] as const;
const TEMPORAL_RULE = 'iso_date_or_utc_instant';
/** The predicate as written: a NAME, trimmed. */
const predicateOf = (predicate: string) => predicate.trim();

const NULLABLE_STRING = nullable(Type.String());
/**
 * Where a fact stands, in kg_query and kg_timeline: whether it holds now, who added it and who
 * last changed it, and when (issue 28; null when unknown or unchanged).
 */
const FACT_STATE = { current: Type.Boolean(), created_by: NULLABLE_STRING, updated_by: NULLABLE_STRING, updated_at: NULLABLE_STRING };
const factState = (t: KgTriple) => ({ current: t.valid_to === null, created_by: t.created_by, updated_by: t.updated_by, updated_at: t.updated_at });
const FACT_WRITE = Type.Object({ success: Type.Literal(true), triple_id: Type.String(), fact: Type.String() });

const KG_ADD_INPUT = Type.Object({
  subject: kgValue('Entity doing or being.'),
  predicate: kgName('Relationship type, e.g. works_on, loves.'),
  object: kgValue('Connected entity or value.'),
  valid_from: temporal(`When it became true (${DATE_HINT}).`),
  valid_to: temporal(`When it stopped being true, to backfill an ended fact (${DATE_HINT}).`),
  source_closet: Type.Optional(Type.String({ description: 'Closet id where the fact appears.' })),
  source_file: Type.Optional(Type.String({ description: 'File the fact was extracted from.' })),
  source_drawer_id: Type.Optional(Type.String({ description: 'Drawer the fact was extracted from.' })),
}, { additionalProperties: false });

/** A fact as `kgAdd` takes it: the tool's input, plus what only library callers (extractors) give. */
export type KgFactInput = Static<typeof KG_ADD_INPUT> & { confidence?: number; adapter_name?: string };

/**
 * Add a fact. An identical current fact is returned instead of duplicated; a closed fact (one
 * with `valid_to`) is a backfill and is stored even while the same fact is open, unless the
 * same closed interval is already stored.
 */
export async function addFact(ctx: KgContext, input: KgFactInput): Promise<Static<typeof FACT_WRITE>> {
  const subject = validateKgValue('subject', input.subject);
  const predicateName = predicateOf(input.predicate);
  const object = validateKgValue('object', input.object);
  const validFrom = validateTemporal('valid_from', input.valid_from) ?? null;
  const validTo = validateTemporal('valid_to', input.valid_to) ?? null;
  const provenance = {
    source_closet: optionalText('source_closet', input.source_closet, 512),
    source_file: optionalText('source_file', input.source_file, 4096),
    source_drawer_id: optionalText('source_drawer_id', input.source_drawer_id, 512),
    adapter_name: optionalText('adapter_name', input.adapter_name, 128),
  };
  const confidence = confidenceOf(input.confidence);
  const fromKey = validFrom === null ? null : startKey(validFrom);
  const toKey = validTo === null ? null : endKey(validTo);
  if (fromKey !== null && validTo !== null && fromKey > latestStartKey(validTo)) throw invertedInterval('valid_to', validTo, validFrom);

  const predicate = normalisePredicate(predicateName);
  const subjectRef: KgEntityRef = { id: entityId(subject), name: subject };
  const objectRef: KgEntityRef = { id: entityId(object), name: object };
  const at = recordedAt(nowOf(ctx));
  const write: KgTripleWrite = {
    id: tripleId(subjectRef.id, predicate, objectRef.id, validFrom, at),
    subject: subjectRef,
    predicate,
    object: objectRef,
    valid_from: validFrom,
    valid_to: validTo,
    from_key: fromKey,
    to_key: toKey,
    confidence,
    ...provenance,
    recorded_at: at,
    created_by: ctx.actor ?? null,
  };
  const { triple_id } = await ctx.graph.kgAdd(write);
  return { success: true, triple_id, fact: factText(subject, predicateName, object) };
}

export const kgAddOperation = defineOperation({
  name: 'kg_add',
  input: KG_ADD_INPUT,
  output: FACT_WRITE,
  rules: [...NAME_RULES, ...KG_VALUE_RULES, TEMPORAL_RULE, 'inverted_interval'],
  context: kgContext,
  run: (input, ctx) => addFact(ctx, input),
});

export const kgInvalidateOperation = defineOperation({
  name: 'kg_invalidate',
  input: Type.Object({
    subject: kgValue('Entity.'),
    predicate: kgName('Relationship.'),
    object: kgValue('Connected entity.'),
    ended: temporal(`When it stopped being true (${DATE_HINT}; default today).`),
  }, { additionalProperties: false }),
  output: Type.Object({ success: Type.Literal(true), fact: Type.String(), ended: Type.String() }),
  rules: [...NAME_RULES, ...KG_VALUE_RULES, TEMPORAL_RULE, 'inverted_interval'],
  context: kgContext,
  async run(input, ctx) {
    const subject = validateKgValue('subject', input.subject);
    const predicateName = predicateOf(input.predicate);
    // The object is a lookup key here, exempt from the length limit ([LATER] docs/palace-behaviour.md §2.5).
    const object = validateKgValue('object', input.object, null);
    const ended = validateTemporal('ended', input.ended) ?? localDate(nowOf(ctx));
    const result = await ctx.graph.kgInvalidate({
      subject_id: entityId(subject),
      predicate: normalisePredicate(predicateName),
      object_id: entityId(object),
      ended,
      ended_key: endKey(ended),
      max_from_key: latestStartKey(ended),
      change: { updated_by: ctx.actor ?? null, updated_at: recordedAt(nowOf(ctx)) },
    });
    rejectIfInverted('ended', ended, result);
    return { success: true as const, fact: factText(subject, predicateName, object), ended };
  },
});

export const kgSupersedeOperation = defineOperation({
  name: 'kg_supersede',
  input: Type.Object({
    subject: kgValue('Entity whose fact changes.'),
    predicate: kgName('Relationship, e.g. uses_model, works_at.'),
    old_object: kgValue('Value being replaced.'),
    new_object: kgValue('New value.'),
    at: temporal(`Boundary (${DATE_HINT}; default now).`),
  }, { additionalProperties: false }),
  output: Type.Object({ success: Type.Literal(true), triple_id: Type.String(), fact: Type.String(), superseded: Type.String() }),
  rules: [...NAME_RULES, ...KG_VALUE_RULES, TEMPORAL_RULE, 'inverted_interval'],
  context: kgContext,
  async run(input, ctx) {
    const subject = validateKgValue('subject', input.subject);
    const predicateName = predicateOf(input.predicate);
    const oldObject = validateKgValue('old_object', input.old_object);
    const newObject = validateKgValue('new_object', input.new_object);
    const at = validateTemporal('at', input.at);
    const now = nowOf(ctx);
    // One boundary instant on both sides: a date-only `at` becomes its 00:00:00Z.
    const boundary = at === undefined ? utcSecond(now) : startKey(at);

    const predicate = normalisePredicate(predicateName);
    const subjectRef: KgEntityRef = { id: entityId(subject), name: subject };
    const newRef: KgEntityRef = { id: entityId(newObject), name: newObject };
    const stamp = recordedAt(now);
    const result = await ctx.graph.kgSupersede({
      old_object: { id: entityId(oldObject), name: oldObject },
      successor: {
        id: tripleId(subjectRef.id, predicate, newRef.id, boundary, stamp),
        subject: subjectRef,
        predicate,
        object: newRef,
        valid_from: boundary,
        valid_to: null,
        from_key: boundary,
        to_key: null,
        confidence: 1.0,
        source_closet: null,
        source_file: null,
        source_drawer_id: null,
        adapter_name: null,
        recorded_at: stamp,
        created_by: ctx.actor ?? null,
      },
    });
    rejectIfInverted('at', boundary, result);
    return { success: true as const, triple_id: result.triple_id, fact: factText(subject, predicateName, newObject), superseded: oldObject };
  },
});

export const kgQueryOperation = defineOperation({
  name: 'kg_query',
  input: Type.Object({
    entity: kgValue('Entity name (person, project, thing).'),
    as_of: temporal(`Only facts valid at this date/instant (${DATE_HINT}).`),
    direction: Type.Optional(
      Type.Enum([...DIRECTIONS], { type: 'string', description: 'outgoing (entity → ?), incoming (? → entity) or both.', default: 'both' }),
    ),
  }, { additionalProperties: false }),
  output: Type.Object({
    entity: Type.String(),
    as_of: NULLABLE_STRING,
    facts: Type.Array(Type.Object({
      direction: Type.String(),
      subject: Type.String(),
      predicate: Type.String(),
      object: Type.String(),
      valid_from: NULLABLE_STRING,
      valid_to: NULLABLE_STRING,
      confidence: Type.Number(),
      source_closet: NULLABLE_STRING,
      ...FACT_STATE,
    })),
    count: Type.Integer(),
  }),
  enumMessages: { direction: () => "direction must be 'outgoing', 'incoming', or 'both'" },
  rules: [...KG_VALUE_RULES, TEMPORAL_RULE],
  context: kgContext,
  async run(input, ctx) {
    const entity = validateKgValue('entity', input.entity);
    const asOf = validateTemporal('as_of', input.as_of) ?? null;
    const rows = await ctx.graph.kgFacts({
      entity_id: entityId(entity),
      direction: input.direction ?? 'both',
      as_of_key: asOf === null ? undefined : startKey(asOf),
    });
    const facts = rows.map((r) => ({
      direction: r.direction,
      subject: r.direction === 'outgoing' ? entity : r.subject_name,
      predicate: r.predicate,
      object: r.direction === 'incoming' ? entity : r.object_name,
      valid_from: r.valid_from,
      valid_to: r.valid_to,
      confidence: r.confidence,
      source_closet: r.source_closet,
      ...factState(r),
    }));
    return { entity, as_of: asOf, facts, count: facts.length };
  },
});

export const kgTimelineOperation = defineOperation({
  name: 'kg_timeline',
  input: Type.Object({ entity: Type.Optional(Type.String({ description: 'Entity to follow (as subject or object); omit for all facts.' })) }, {
    additionalProperties: false,
  }),
  output: Type.Object({
    entity: Type.String(),
    timeline: Type.Array(
      Type.Object({ subject: Type.String(), predicate: Type.String(), object: Type.String(), valid_from: NULLABLE_STRING, valid_to: NULLABLE_STRING,
        ...FACT_STATE }),
    ),
    count: Type.Integer(),
  }),
  /** A blank entity means every fact. */
  rules: KG_VALUE_RULES,
  context: kgContext,
  async run(input, ctx) {
    const entity = input.entity === undefined || input.entity.trim() === '' ? undefined : validateKgValue('entity', input.entity);
    const rows = await ctx.graph.kgTimeline({ entity_id: entity === undefined ? undefined : entityId(entity), limit: KG_TIMELINE_LIMIT });
    const timeline = rows.map((r) => ({
      subject: r.subject_name,
      predicate: r.predicate,
      object: r.object_name,
      valid_from: r.valid_from,
      valid_to: r.valid_to,
      ...factState(r),
    }));
    return { entity: entity ?? 'all', timeline, count: timeline.length };
  },
});

export const kgStatsOperation = defineOperation({
  name: 'kg_stats',
  input: Type.Object({}, { additionalProperties: false }),
  output: Type.Object({ entities: Type.Integer(), triples: Type.Integer(), current_facts: Type.Integer(), expired_facts: Type.Integer(),
    relationship_types: Type.Array(Type.String()) }),
  context: kgContext,
  async run(_input, ctx) {
    const s = await ctx.graph.kgStats();
    return {
      entities: s.entities,
      triples: s.triples,
      current_facts: s.current_facts,
      expired_facts: s.triples - s.current_facts,
      relationship_types: s.relationship_types,
    };
  },
});
