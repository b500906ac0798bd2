/**
 * Normalisation and validation of logstream input (docs/logstream.md §3.2, §4, §5.3–§5.4). Pure: no
 * store is touched, so the SQLite and Redis profiles share every rule and message. Messages are
 * the spec's exact strings; each error names the field and the rule it broke.
 */
import { invalidArgument } from '../../core/errors.js';
import { replaceLoneSurrogates, sha256Hex } from '../../core/text.js';
import { EVENT_STATUSES, validateEventType, validateRouting, validateTemporal } from '../../core/validate.js';
import type { ArtifactDraft, EventDraft, EventQuery } from '../../stores/ports/logstream/records.js';

export const BODY_MAX_BYTES = 262_144;
export const METADATA_MAX_BYTES = 65_536;
export const CONTENT_MAX_BYTES = 4_194_304;
export const LIST_LIMIT_DEFAULT = 50;
export const LIST_LIMIT_MAX = 500;
export const WAIT_TIMEOUT_DEFAULT_MS = 60_000;
export const WAIT_TIMEOUT_MAX_MS = 300_000;
export const ARTIFACT_KINDS = ['file', 'json', 'log', 'note', 'patch'] as const;

const utf8Bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/**
 * A value quoted the way the original's messages quote it (Python `repr`): single quotes unless
 * the text holds a single quote and no double quote; backslash and control characters escaped.
 */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value !== 'string') return JSON.stringify(value) ?? String(value);
  const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
  let out = '';
  for (const ch of value) {
    const cp = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (cp < 0x20 || (cp >= 0x7f && cp <= 0xa0)) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (cp >= 0xd800 && cp <= 0xdfff) out += `\\u${cp.toString(16)}`;
    else out += ch;
  }
  return quote + out + quote;
}

/**
 * A routing field (docs/logstream.md §3.2 item 2): trimmed, lone surrogates become U+FFFD (the logstream keeps
 * them visible as replacement characters rather than silently dropping them), ≤ 256 characters,
 * no control characters. Returns null for an absent optional field.
 */
export function routingField(field: string, value: unknown, required: boolean): string | null {
  const replaced = typeof value === 'string' ? replaceLoneSurrogates(value) : value;
  return validateRouting(field, replaced, required) ?? null;
}

export function eventType(value: unknown): string {
  try {
    return validateEventType(value);
  } catch (e) {
    if ((e as { rule?: string }).rule !== 'event_type_pattern') throw e;
    const trimmed = (value as string).trim();
    throw invalidArgument('type', 'event_type_pattern',
      `type=${pyRepr(trimmed)} is not a valid event type (lowercase letters, digits, '.', '_', '-'; max 64 chars)`);
  }
}

/** docs/logstream.md §3.2 item 3: exact, case-sensitive, untrimmed; null or "" means none. */
export function eventStatus(value: unknown, field = 'status'): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string' || !(EVENT_STATUSES as readonly string[]).includes(value)) {
    throw invalidArgument(field, 'one_of', `${field}=${pyRepr(value)} is not one of: ${EVENT_STATUSES.join(', ')}`);
  }
  return value;
}

export function eventBody(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw invalidArgument('body', 'string', 'body must be a string');
  if (value.includes('\0')) throw invalidArgument('body', 'null_bytes', 'body contains null bytes');
  const body = replaceLoneSurrogates(value);
  const n = utf8Bytes(body);
  if (n > BODY_MAX_BYTES) throw invalidArgument('body', 'max_bytes', `body is ${n} bytes; maximum is ${BODY_MAX_BYTES} bytes`);
  return body;
}

function compareCodePoints(a: string, b: string): number {
  const x = Array.from(a);
  const y = Array.from(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Canonical JSON of docs/logstream.md §3.2 item 5: sorted keys at every level, `", "` and `": "` separators. */
function canonical(value: unknown, seen: Set<object>, path: string): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new Error(`${path}: ${value} is not a finite number`);
      return JSON.stringify(value);
    case 'string':
      return JSON.stringify(replaceLoneSurrogates(value));
    case 'object': {
      if (seen.has(value)) throw new Error(`${path}: circular reference`);
      seen.add(value);
      let text: string;
      if (Array.isArray(value)) {
        text = `[${value.map((v, i) => canonical(v, seen, `${path}[${i}]`)).join(', ')}]`;
      } else if (isPlainObject(value)) {
        const keys = Object.keys(value).sort(compareCodePoints);
        text = `{${keys.map((k) => `${JSON.stringify(replaceLoneSurrogates(k))}: ${canonical(value[k], seen, `${path}.${k}`)}`).join(', ')}}`;
      } else {
        throw new Error(`${path}: object of type ${value.constructor?.name ?? 'unknown'} is not a JSON value`);
      }
      seen.delete(value);
      return text;
    }
    default:
      throw new Error(`${path}: value of type ${typeof value} is not a JSON value`);
  }
}

/** Canonical text of a replicated or imported event's metadata: stored as received, never size-checked (docs/logstream.md §8.4, docs/decisions.md Q5). */
export function remoteMetadataJson(value: unknown): string {
  if (value === undefined || value === null || !isPlainObject(value)) return '{}';
  return canonical(value, new Set(), 'metadata');
}

/** docs/logstream.md §3.2 item 5: the canonical text that is stored. */
export function metadataJson(value: unknown): string {
  if (value === undefined || value === null) return '{}';
  if (!isPlainObject(value)) throw invalidArgument('metadata', 'object', 'metadata must be an object');
  let text: string;
  try {
    text = canonical(value, new Set(), 'metadata');
  } catch (e) {
    throw invalidArgument('metadata', 'json_serializable', `metadata is not JSON-serializable: ${(e as Error).message}`);
  }
  if (utf8Bytes(text) > METADATA_MAX_BYTES) throw invalidArgument('metadata', 'max_bytes', `metadata exceeds maximum size of ${METADATA_MAX_BYTES} bytes`);
  return text;
}

/** docs/logstream.md §3.2 item 6 (the existence check happens inside the write). */
export function artifactIds(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  const fail = () => invalidArgument('artifact_ids', 'list_of_ids', 'artifact_ids must be a list of artifact id strings');
  if (!Array.isArray(value)) throw fail();
  const out: string[] = [];
  for (const v of value) {
    if (typeof v !== 'string' || v === '') throw fail();
    if (!out.includes(v)) out.push(v);
  }
  return out;
}

/** The event fields of docs/logstream.md §3.2, validated in the spec's order. */
export function eventDraft(input: Record<string, unknown>): EventDraft {
  const type = eventType(input.type);
  const stream = routingField('stream', input.stream, true)!;
  const room = routingField('room', input.room, true)!;
  const topic = routingField('topic', input.topic, false);
  const from_agent = routingField('from_agent', input.from_agent, true)!;
  const to_agent = routingField('to_agent', input.to_agent, false);
  const correlation_id = routingField('correlation_id', input.correlation_id, false);
  const branch = routingField('branch', input.branch, false);
  const base_commit = routingField('base_commit', input.base_commit, false);
  const status = eventStatus(input.status);
  const body = eventBody(input.body);
  const metadata_json = metadataJson(input.metadata);
  const artifact_ids = artifactIds(input.artifact_ids);
  return { type, stream, room, topic, from_agent, to_agent, correlation_id, branch, base_commit, status, body, metadata_json, artifact_ids };
}

export const PATCH_WARNING_NO_NEWLINE =
  'patch content does not end with a trailing newline; git apply will reject the final hunk as corrupt — store the diff byte-exactly including its trailing newline';
export const PATCH_WARNING_CRLF =
  'patch content contains carriage returns (CRLF line endings); git apply often rejects CRLF diffs — generate the diff with LF endings';

export function patchWarnings(content: string): string[] {
  const warnings: string[] = [];
  if (!content.endsWith('\n')) warnings.push(PATCH_WARNING_NO_NEWLINE);
  if (content.includes('\r')) warnings.push(PATCH_WARNING_CRLF);
  return warnings;
}

/** docs/logstream.md §4, in order: kind, created_by (reported under `creatorField`), content, metadata. */
export function artifactDraft(input: { kind: unknown; created_by: unknown; content: unknown; metadata: unknown }, creatorField = 'created_by'): ArtifactDraft {
  if (typeof input.kind !== 'string' || !(ARTIFACT_KINDS as readonly string[]).includes(input.kind)) {
    throw invalidArgument('kind', 'one_of', `kind=${pyRepr(input.kind)} is not one of: ${ARTIFACT_KINDS.join(', ')}`);
  }
  const created_by = routingField(creatorField, input.created_by, true)!;
  if (typeof input.content !== 'string' || input.content === '') throw invalidArgument('content', 'non_empty_string', 'content must be a non-empty string');
  if (input.content.includes('\0')) throw invalidArgument('content', 'null_bytes', 'content contains null bytes');
  const content = replaceLoneSurrogates(input.content);
  const bytes = Buffer.from(content, 'utf8');
  if (bytes.length > CONTENT_MAX_BYTES)
    throw invalidArgument('content', 'max_bytes', `content is ${bytes.length} bytes; maximum is ${CONTENT_MAX_BYTES} bytes`);
  const metadata_json = metadataJson(input.metadata);
  return { kind: input.kind, content, sha256: sha256Hex(bytes), size_bytes: bytes.length, created_by, metadata_json };
}

/**
 * An integer argument (docs/tools.md §9.4): integers pass, finite numbers are truncated toward
 * zero, strings holding a decimal integer are parsed; booleans and anything else are refused.
 */
export function integerArgument(field: string, value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number' && Number.isFinite(value)) return Math.trunc(value);
  if (typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value)) return Number.parseInt(value.trim(), 10);
  throw invalidArgument(field, 'integer', `Invalid value for parameter '${field}'`);
}

export function listLimit(value: unknown): number {
  const n = integerArgument('limit', value);
  if (n === undefined) return LIST_LIMIT_DEFAULT;
  if (n < 1) throw invalidArgument('limit', 'positive_integer', 'limit must be a positive integer');
  return Math.min(n, LIST_LIMIT_MAX);
}

export function waitTimeoutMs(value: unknown): number {
  const n = integerArgument('timeout_ms', value);
  if (n === undefined) return WAIT_TIMEOUT_DEFAULT_MS;
  if (n < 0) throw invalidArgument('timeout_ms', 'non_negative', 'timeout_ms must be a non-negative number');
  return Math.min(n, WAIT_TIMEOUT_MAX_MS);
}

export function listOrder(value: unknown): 'asc' | 'desc' {
  if (value === undefined || value === null) return 'asc';
  const v = typeof value === 'string' ? value.trim().toLowerCase() : undefined;
  if (v === 'asc' || v === 'desc') return v;
  throw invalidArgument('order', 'one_of', `order=${pyRepr(value)} must be 'asc' or 'desc'`);
}

export function previewFlag(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw invalidArgument('preview', 'boolean', "Invalid value for parameter 'preview'");
  return value;
}

export function sinceCreatedAt(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw invalidArgument('since_created_at', 'string', 'since_created_at must be a string');
  try {
    return validateTemporal('since_created_at', value);
  } catch {
    throw invalidArgument('since_created_at', 'iso_date_or_utc_instant',
      `since_created_at=${pyRepr(value)} is not a valid ISO-8601 date or UTC datetime (expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ)`);
  }
}

/** An optional event filter: absent for null/"", else validated like the event field. */
function filterField(field: string, value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  return routingField(field, value, false) ?? undefined;
}

export type QueryFilters = Omit<EventQuery, 'afterSeq' | 'beforeSeq' | 'order' | 'limit'>;

/** The filters of docs/logstream.md §5.3 in a fixed order, so the first invalid one is reported deterministically. */
export function queryFilters(input: Record<string, unknown>): QueryFilters {
  const filters: QueryFilters = {
    stream: filterField('stream', input.stream),
    room: filterField('room', input.room),
    topic: filterField('topic', input.topic),
    type: input.type === undefined || input.type === null || input.type === '' ? undefined : eventType(input.type),
    to_agent: filterField('to_agent', input.to_agent),
    from_agent: filterField('from_agent', input.from_agent),
    correlation_id: filterField('correlation_id', input.correlation_id),
    status: eventStatus(input.status) ?? undefined,
    sinceCreatedAt: sinceCreatedAt(input.since_created_at),
  };
  return filters;
}

/** Task slug of docs/logstream.md §5.9. */
export function slug(text: string, fallback: string): string {
  const s = text.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 40).replace(/_+$/g, '');
  return s === '' ? fallback : s;
}
