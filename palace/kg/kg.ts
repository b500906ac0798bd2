/**
 * The temporal knowledge graph (docs/palace-behaviour.md §10, docs/tools.md §4): validation, entity and
 * predicate normalisation, validity keys and result shapes. Validity is half-open at the
 * instant level (docs/decisions.md palace 7): a date-only start means 00:00:00Z of that day, a date-only end
 * covers the whole day (it ends at 00:00:00Z of the next), and a supersede boundary belongs to
 * the new fact only.
 */
import { invalidArgument, PalaceError } from '../../core/errors.js';
import { codePointLength, hashN, lengthPrefixed, replaceLoneSurrogates } from '../../core/text.js';
import { validateKgValue, validateName, validateTemporal } from '../../core/validate.js';
import type { GraphStore, KgDirection, KgEntityRef, KgInvertedInterval, KgTripleWrite } from '../../stores/ports/graph-store.js';
import { nowOf } from '../context.js';

export interface KgContext {
  graph: GraphStore;
  /** Injectable clock (tests pin "now" and "today"). */
  now?: () => Date;
}

export const KG_TIMELINE_LIMIT = 100;
const DIRECTIONS: readonly KgDirection[] = ['outgoing', 'incoming', 'both'];
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

/** Optional free text (provenance): null when absent/blank; string, no NUL, bounded length. */
function optionalText(field: string, value: unknown, max: number): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw invalidArgument(field, 'string', `${field} must be a string`);
  const v = value.trim();
  if (v === '') return null;
  if (v.includes('\0')) throw invalidArgument(field, 'null_bytes', `${field} contains null bytes`);
  if (codePointLength(v) > max) throw invalidArgument(field, 'max_length', `${field} exceeds maximum length of ${max} characters`);
  return replaceLoneSurrogates(v);
}

function confidenceOf(value: unknown): number {
  if (value === undefined || value === null) return 1.0;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1) {
    throw invalidArgument('confidence', 'range', 'confidence must be a number between 0 and 1');
  }
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
// Operations

export interface KgAddInput {
  subject: unknown;
  predicate: unknown;
  object: unknown;
  valid_from?: unknown;
  valid_to?: unknown;
  source_closet?: unknown;
  source_file?: unknown;
  source_drawer_id?: unknown;
  /** Library callers only (extractors); not a tool parameter. */
  confidence?: unknown;
  adapter_name?: unknown;
}

export interface KgAddResult {
  success: true;
  triple_id: string;
  fact: string;
}

/**
 * Add a fact. An identical current fact is returned instead of duplicated; a closed fact (one
 * with `valid_to`) is a backfill and is stored even while the same fact is open, unless the
 * same closed interval is already stored.
 */
export async function kgAdd(ctx: KgContext, input: KgAddInput): Promise<KgAddResult> {
  const subject = validateKgValue('subject', input.subject);
  const predicateName = validateName('predicate', input.predicate);
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
  };
  const { triple_id } = await ctx.graph.kgAdd(write);
  return { success: true, triple_id, fact: factText(subject, predicateName, object) };
}

export interface KgInvalidateInput {
  subject: unknown;
  predicate: unknown;
  object: unknown;
  ended?: unknown;
}

export async function kgInvalidate(ctx: KgContext, input: KgInvalidateInput): Promise<{ success: true; fact: string; ended: string }> {
  const subject = validateKgValue('subject', input.subject);
  const predicateName = validateName('predicate', input.predicate);
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
  });
  rejectIfInverted('ended', ended, result);
  return { success: true, fact: factText(subject, predicateName, object), ended };
}

export interface KgSupersedeInput {
  subject: unknown;
  predicate: unknown;
  old_object: unknown;
  new_object: unknown;
  at?: unknown;
}

export async function kgSupersede(ctx: KgContext, input: KgSupersedeInput): Promise<{ success: true; triple_id: string; fact: string; superseded: string }> {
  const subject = validateKgValue('subject', input.subject);
  const predicateName = validateName('predicate', input.predicate);
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
    },
  });
  rejectIfInverted('at', boundary, result);
  return { success: true, triple_id: result.triple_id, fact: factText(subject, predicateName, newObject), superseded: oldObject };
}

export interface KgFact {
  direction: 'outgoing' | 'incoming';
  subject: string;
  predicate: string;
  object: string;
  valid_from: string | null;
  valid_to: string | null;
  confidence: number;
  source_closet: string | null;
  current: boolean;
}

export interface KgQueryResult {
  entity: string;
  as_of: string | null;
  facts: KgFact[];
  count: number;
}

export async function kgQuery(ctx: KgContext, input: { entity: unknown; as_of?: unknown; direction?: unknown }): Promise<KgQueryResult> {
  const entity = validateKgValue('entity', input.entity);
  const asOf = validateTemporal('as_of', input.as_of) ?? null;
  const direction = input.direction === undefined || input.direction === null ? 'both' : input.direction;
  if (typeof direction !== 'string' || !(DIRECTIONS as readonly string[]).includes(direction)) {
    throw invalidArgument('direction', 'one_of', "direction must be 'outgoing', 'incoming', or 'both'");
  }
  const rows = await ctx.graph.kgFacts({
    entity_id: entityId(entity),
    direction: direction as KgDirection,
    as_of_key: asOf === null ? undefined : startKey(asOf),
  });
  const facts = rows.map((r): KgFact => ({
    direction: r.direction,
    subject: r.direction === 'outgoing' ? entity : r.subject_name,
    predicate: r.predicate,
    object: r.direction === 'incoming' ? entity : r.object_name,
    valid_from: r.valid_from,
    valid_to: r.valid_to,
    confidence: r.confidence,
    source_closet: r.source_closet,
    current: r.valid_to === null,
  }));
  return { entity, as_of: asOf, facts, count: facts.length };
}

export interface KgTimelineEntry {
  subject: string;
  predicate: string;
  object: string;
  valid_from: string | null;
  valid_to: string | null;
  current: boolean;
}

export async function kgTimeline(ctx: KgContext, input: { entity?: unknown } = {}): Promise<{ entity: string; timeline: KgTimelineEntry[]; count: number }> {
  const blank = input.entity === undefined || input.entity === null || (typeof input.entity === 'string' && input.entity.trim() === '');
  const entity = blank ? undefined : validateKgValue('entity', input.entity);
  const rows = await ctx.graph.kgTimeline({ entity_id: entity === undefined ? undefined : entityId(entity), limit: KG_TIMELINE_LIMIT });
  const timeline = rows.map((r): KgTimelineEntry => ({
    subject: r.subject_name,
    predicate: r.predicate,
    object: r.object_name,
    valid_from: r.valid_from,
    valid_to: r.valid_to,
    current: r.valid_to === null,
  }));
  return { entity: entity ?? 'all', timeline, count: timeline.length };
}

export interface KgStatsResult {
  entities: number;
  triples: number;
  current_facts: number;
  expired_facts: number;
  relationship_types: string[];
}

export async function kgStats(ctx: KgContext): Promise<KgStatsResult> {
  const s = await ctx.graph.kgStats();
  return {
    entities: s.entities,
    triples: s.triples,
    current_facts: s.current_facts,
    expired_facts: s.triples - s.current_facts,
    relationship_types: s.relationship_types,
  };
}
