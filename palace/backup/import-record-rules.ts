/**
 * The write rules every imported record must pass (issue 24, I4): the validators of the live
 * writes — wing and room names (validateName), drawer content size (CONTENT_MAX per stored row),
 * KG values, tunnel endpoints, file-state paths — and, for events and artifacts, the mesh's
 * remote-record checks, which run the local event and artifact validators. A record that breaks
 * one is refused with an `invalid_argument` error that keeps the rule's field and rule and names
 * the record: its line in the export file, kind and id (`details.line`, `record_kind`, `record_id`).
 */
import { invalidArgument, isPalaceError, PalaceError } from '../../core/errors.js';
import { codePointLength } from '../../core/text.js';
import { validateContent, validateKgValue, validateName, validateTemporal } from '../../core/validate.js';
import { decodeVector, RECORD_KINDS } from './backup-records.js';
import type { PalaceRecord, RecordKind } from './backup-records.js';
import { remoteArtifact, remoteEvent } from '../logstream/remote.js';
import { METADATA_MAX_BYTES } from '../logstream/validate.js';

const ID_MAX = 512;
const PATH_MAX = 4096;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function text(field: string, value: unknown, max: number, required = true): string {
  if (value === undefined || value === null || value === '') {
    if (required) throw invalidArgument(field, 'required', `${field} is required`);
    return '';
  }
  if (typeof value !== 'string') throw invalidArgument(field, 'string', `${field} must be a string`);
  if (value.includes('\0')) throw invalidArgument(field, 'null_bytes', `${field} contains null bytes`);
  if (codePointLength(value) > max) throw invalidArgument(field, 'max_length', `${field} exceeds maximum length of ${max} characters`);
  return value;
}

function finite(field: string, value: unknown, min = -Infinity): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min)
    throw invalidArgument(field, 'finite_number', `${field} must be a finite number${min > -Infinity ? ` ≥ ${min}` : ''}`);
  return value;
}

function object(field: string, value: unknown): Record<string, unknown> {
  if (!isObject(value)) throw invalidArgument(field, 'object', `${field} must be an object`);
  return value;
}

function drawer(r: Record<string, unknown>, dimension: number): void {
  const id = text('id', r.id, ID_MAX);
  validateContent(r.content);
  const meta = object('meta', r.meta);
  validateName('wing', meta.wing);
  validateName('room', meta.room);
  text('source_file', meta.source_file, PATH_MAX, false);
  for (const [key, value] of Object.entries(meta)) {
    if (!['string', 'number', 'boolean'].includes(typeof value))
      throw invalidArgument(`meta.${key}`, 'scalar', `meta.${key} must be a string, number or boolean`);
  }
  if (Buffer.byteLength(JSON.stringify(meta), 'utf8') > METADATA_MAX_BYTES)
    throw invalidArgument('meta', 'max_bytes', `meta exceeds maximum size of ${METADATA_MAX_BYTES} bytes`);
  if (typeof r.embedding !== 'string') throw invalidArgument('embedding', 'base64_vector', 'embedding must be base64 float32 bytes');
  const vector = decodeVector(r.embedding, dimension, `drawer ${id}`);
  if (!vector.every(Number.isFinite)) throw invalidArgument('embedding', 'finite_number', `drawer ${id}: the embedding holds a number that is not finite`);
}

function fileState(r: Record<string, unknown>): void {
  const s = object('state', r.state);
  validateName('wing', s.wing);
  text('source_file', s.source_file, PATH_MAX);
  finite('size', s.size, 0);
  finite('mtime_ms', s.mtime_ms);
  finite('drawer_count', s.drawer_count, 0);
  text('content_sha256', s.content_sha256, 128, false);
  text('mined_at', s.mined_at, 64);
  if (s.extra !== undefined) {
    for (const [key, value] of Object.entries(object('extra', s.extra))) {
      if (!['string', 'number', 'boolean'].includes(typeof value))
        throw invalidArgument(`extra.${key}`, 'scalar', `extra.${key} must be a string, number or boolean`);
    }
  }
}

function kgTriple(r: Record<string, unknown>): void {
  const t = object('triple', r.triple);
  text('id', t.id, ID_MAX);
  validateKgValue('subject', t.subject_name);
  validateKgValue('object', t.object_name);
  text('subject_id', t.subject_id, ID_MAX);
  text('object_id', t.object_id, ID_MAX);
  validateName('predicate', t.predicate);
  validateTemporal('valid_from', t.valid_from);
  validateTemporal('valid_to', t.valid_to);
  const confidence = finite('confidence', t.confidence, 0);
  if (confidence > 1) throw invalidArgument('confidence', 'range', 'confidence must be a number between 0 and 1');
  text('recorded_at', t.recorded_at, 64);
  text('source_closet', t.source_closet, 512, false);
  text('source_file', t.source_file, PATH_MAX, false);
  text('source_drawer_id', t.source_drawer_id, ID_MAX, false);
  text('adapter_name', t.adapter_name, 128, false);
  ownership(t, ['created_by', 'updated_by', 'updated_at']);
}

/** Who made and last changed a record, and when (issue 28): optional, absent in exports written before. */
function ownership(r: Record<string, unknown>, fields: readonly string[]): void {
  for (const field of fields) text(field, r[field], ID_MAX, false);
}

function tunnel(r: Record<string, unknown>): void {
  const t = object('tunnel', r.tunnel);
  text('id', t.id, ID_MAX);
  for (const end of ['source', 'target'] as const) {
    const e = object(end, t[end]);
    validateName(`${end}_wing`, e.wing);
    validateName(`${end}_room`, e.room);
    text(`${end}.drawer_id`, e.drawer_id, ID_MAX, false);
  }
  text('label', t.label, 1000, false);
  if (!['explicit', 'topic', 'entity'].includes(t.kind as string)) throw invalidArgument('kind', 'one_of', 'kind must be one of: explicit, topic, entity');
  ownership(t, ['created_by', 'updated_by']);
}

function hallway(r: Record<string, unknown>): void {
  const h = object('hallway', r.hallway);
  text('id', h.id, ID_MAX);
  validateName('wing', h.wing);
  validateKgValue('entity_a', h.entity_a);
  validateKgValue('entity_b', h.entity_b);
  finite('co_occurrence_count', h.co_occurrence_count, 0);
  if (!Array.isArray(h.rooms)) throw invalidArgument('rooms', 'list', 'rooms must be a list of room names');
  for (const room of h.rooms) validateName('room', room);
  text('label', h.label, 1000, false);
}

/** An audit record keeps its chain: a positive seq and the hashes it was written with (audit verify checks them after import). */
function auditRecord(r: Record<string, unknown>): void {
  const a = object('record', r.record);
  const anchor = object('anchor', r.anchor);
  if (!Number.isSafeInteger(a.seq) || (a.seq as number) < 1) throw invalidArgument('seq', 'positive_integer', 'an audit record needs a positive integer seq');
  if (!Number.isSafeInteger(anchor.seq)) throw invalidArgument('anchor', 'integer', "an audit record's anchor needs an integer seq");
  for (const [field, value] of [['hash', a.hash], ['prev_hash', a.prev_hash], ['anchor.hash', anchor.hash]] as const) {
    if (typeof value !== 'string' || !/^[0-9a-f]{64}$/.test(value)) throw invalidArgument(field, 'sha256_hex', `${field} must be a sha256 in hex`);
  }
}

/** The id a record is known by within its kind: what a duplicate in the export would repeat. */
export function recordId(record: PalaceRecord): string {
  switch (record.kind) {
    case 'drawer':
      return record.id;
    case 'file_state':
      return `${record.state.wing}\u0000${record.state.source_file}`;
    case 'kg_triple':
      return record.triple.id;
    case 'tunnel':
      return record.tunnel.id;
    case 'hallway':
      return record.hallway.id;
    case 'artifact':
      return record.artifact.id;
    case 'event':
      return record.event.id;
    case 'audit':
      return String(record.record.seq);
  }
}

function checkFields(kind: RecordKind, r: Record<string, unknown>, dimension: number): void {
  switch (kind) {
    case 'drawer':
      return drawer(r, dimension);
    case 'file_state':
      return fileState(r);
    case 'kg_triple':
      return kgTriple(r);
    case 'tunnel':
      return tunnel(r);
    case 'hallway':
      return hallway(r);
    case 'artifact':
      remoteArtifact(r.artifact);
      return;
    case 'event':
      remoteEvent(r.event);
      return;
    case 'audit':
      auditRecord(r);
      return;
  }
}

/** Where a record sits in the stream, for error messages: `line n` of a file (header = line 1). */
export function recordPlace(index: number): string {
  return `line ${index + 1}`;
}

/**
 * `item` as a record of the export format, checked against the live write rules; `index` is its
 * position after the header (1-based). Throws the first broken rule, naming the record.
 */
export function checkRecord(item: unknown, index: number, dimension: number): PalaceRecord {
  const place = recordPlace(index);
  const r = isObject(item) ? item : {};
  if (!RECORD_KINDS.includes(r.kind as RecordKind))
    throw invalidArgument('kind', 'record_kind', `${place}: unknown record kind ${JSON.stringify(r.kind)}`, { line: index + 1 });
  const kind = r.kind as RecordKind;
  try {
    checkFields(kind, r, dimension);
  } catch (e) {
    if (!isPalaceError(e)) throw e;
    const id = (() => {
      try {
        return recordId(r as unknown as PalaceRecord);
      } catch {
        return undefined;
      }
    })();
    throw new PalaceError(e.code, `${place}: ${kind}${typeof id === 'string' ? ` ${JSON.stringify(id)}` : ''}: ${e.message}`, {
      field: e.field,
      rule: e.rule,
      details: { ...e.details, line: index + 1, record_kind: kind, record_id: typeof id === 'string' ? id : null },
    });
  }
  return r as unknown as PalaceRecord;
}
