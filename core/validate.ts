/**
 * The shared input validators of docs/tools.md §0.2. Each returns the normalised value or throws
 * an `invalid_argument` PalaceError naming the field and the rule; messages keep the spec's
 * exact substrings because clients and tests match on them.
 */
import { invalidArgument } from './errors.js';
import { codePointLength, hasLoneSurrogate, replaceLoneSurrogates, stripLoneSurrogates } from './text.js';

const NAME_MAX = 128;
// First and last a letter/digit (combining marks allowed after the first, docs/palace-behaviour.md §2.5 MAY);
// inside: word characters, space, dot, apostrophe, hyphen.
const NAME_PATTERN = /^(?:[\p{L}\p{N}]|[\p{L}\p{N}][\p{L}\p{N}\p{M}_ .'-]{0,126}[\p{L}\p{N}\p{M}])$/u;

function requireString(field: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw invalidArgument(field, 'non_empty_string', `${field} must be a non-empty string`);
  }
  return value;
}

/** The rules a NAME may break (documented on the routes that filter by one). */
export const NAME_RULES = ['max_length', 'path_characters', 'null_bytes', 'name_pattern'] as const;

/** NAME: wing, room, topic, agent_name, predicate, tunnel endpoints. */
export function validateName(field: string, value: unknown): string {
  const v = requireString(field, value).trim();
  if (codePointLength(v) > NAME_MAX) throw invalidArgument(field, 'max_length', `${field} exceeds maximum length of ${NAME_MAX} characters`);
  if (v.includes('..') || v.includes('/') || v.includes('\\')) throw invalidArgument(field, 'path_characters', `${field} contains invalid path characters`);
  if (v.includes('\0')) throw invalidArgument(field, 'null_bytes', `${field} contains null bytes`);
  if (!NAME_PATTERN.test(v)) throw invalidArgument(field, 'name_pattern', `${field} contains invalid characters`);
  return v;
}

/** OPTNAME: absent, null or blank means "no filter". */
export function validateOptionalName(field: string, value: unknown): string | undefined {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) return undefined;
  return validateName(field, value);
}

/** KGVALUE: subjects, objects, entities. `maxLength` is lifted for lookup keys. */
export function validateKgValue(field: string, value: unknown, maxLength: number | null = NAME_MAX): string {
  const v = replaceLoneSurrogates(requireString(field, value).trim());
  if (maxLength !== null && codePointLength(v) > maxLength)
    throw invalidArgument(field, 'max_length', `${field} exceeds maximum length of ${maxLength} characters`);
  if (v.includes('\0')) throw invalidArgument(field, 'null_bytes', `${field} contains null bytes`);
  return v;
}

/** Optional free text (a label, an id, provenance): undefined when absent or blank; no NUL, bounded length. */
export function validateOptionalText(field: string, value: string | undefined, max: number): string | undefined {
  const v = value?.trim() ?? '';
  if (v === '') return undefined;
  if (v.includes('\0')) throw invalidArgument(field, 'null_bytes', `${field} contains null bytes`);
  if (codePointLength(v) > max) throw invalidArgument(field, 'max_length', `${field} exceeds maximum length of ${max} characters`);
  return replaceLoneSurrogates(v);
}

/** Required free text (an id to act on): blank is refused as missing (`required`), else as validateOptionalText. */
export function validateRequiredText(field: string, value: string | undefined, max: number): string {
  const v = validateOptionalText(field, value, max);
  if (v === undefined) throw invalidArgument(field, 'required', `${field} is required`);
  return v;
}

export const CONTENT_MAX = 100_000;

/** CONTENT: the untrimmed value is stored; lone surrogates are replaced. */
export function validateContent(value: unknown, field = 'content'): string {
  const v = requireString(field, value);
  if (codePointLength(v) > CONTENT_MAX) throw invalidArgument(field, 'max_length', `${field} exceeds maximum length of ${CONTENT_MAX} characters`);
  if (v.includes('\0')) throw invalidArgument(field, 'null_bytes', `${field} contains null bytes`);
  return replaceLoneSurrogates(v);
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const INSTANT_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(Z|\+00:00)$/;

function isRealDate(y: number, m: number, d: number): boolean {
  const t = new Date(Date.UTC(y, m - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
}

/** TEMPORAL: `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:SSZ` (`+00:00` rewritten to `Z`); empty passes. */
export function validateTemporal(field: string, value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const fail = () =>
    invalidArgument(field, 'iso_date_or_utc_instant',
      `${field}='${String(value)}' is not a valid ISO-8601 date or UTC datetime (expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ)`);
  if (typeof value !== 'string') throw fail();
  const v = value.trim();
  const d = DATE_RE.exec(v);
  if (d) {
    if (!isRealDate(Number(d[1]), Number(d[2]), Number(d[3]))) throw fail();
    return v;
  }
  const t = INSTANT_RE.exec(v);
  if (t && isRealDate(Number(t[1]), Number(t[2]), Number(t[3])) && Number(t[4]) < 24 && Number(t[5]) < 60 && Number(t[6]) < 60) {
    return `${v.slice(0, 19)}Z`;
  }
  throw fail();
}

/** SOURCEFILE: a search filter matched against stored paths, never opened. */
export function validateSourceFileFilter(value: unknown, field = 'source_file'): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalidArgument(field, 'string', `${field} must be a string`);
  const v = value.trim();
  if (v === '') return undefined;
  if (v.includes('\0')) throw invalidArgument(field, 'null_bytes', `${field} contains null bytes`);
  if (hasLoneSurrogate(v)) throw invalidArgument(field, 'surrogates', `${field} contains invalid surrogate characters`);
  if (codePointLength(v) > 4096) throw invalidArgument(field, 'max_length', `${field} exceeds maximum length of 4096 characters`);
  return v;
}

const DATEBOUND_RE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?(?:Z|[+-]\d{2}:\d{2})?)?$/;

/**
 * DATEBOUND: `since`/`before` on search and list. Returns a UTC instant string comparable with
 * stored `filed_at` values (docs/decisions.md palace 9: filed_at is a UTC instant); the offset of the input is
 * dropped and the wall-clock value is read as UTC, the spec's naive comparison rule.
 */
export function validateDateBound(field: string, value: unknown): string | undefined {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) return undefined;
  const fail = () => invalidArgument(field, 'iso_date_or_datetime', `${field}='${String(value)}' is not a valid ISO date or datetime`);
  if (typeof value !== 'string') throw fail();
  const m = DATEBOUND_RE.exec(value.trim());
  if (!m) throw fail();
  const [y, mo, d, h = '00', mi = '00', s = '00', frac = ''] = m.slice(1).map((x) => x ?? undefined) as string[];
  if (!isRealDate(Number(y), Number(mo), Number(d)) || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) throw fail();
  return `${y}-${mo}-${d}T${h}:${mi}:${s}.${(frac || '').padEnd(6, '0')}Z`;
}

/** Both bounds given: `since` must be strictly earlier than `before`. */
export function validateDateWindow(since: unknown, before: unknown): { since?: string; before?: string } {
  const s = validateDateBound('since', since);
  const b = validateDateBound('before', before);
  if (s !== undefined && b !== undefined && s >= b) {
    throw invalidArgument('since', 'window_order', `since (${String(since)}) must be earlier than before (${String(before)})`);
  }
  return { ...(s === undefined ? {} : { since: s }), ...(b === undefined ? {} : { before: b }) };
}

/** ROUTING: logstream routing fields. Returns undefined for null/"" (caller enforces required). */
export function validateRouting(field: string, value: unknown, required = false): string | undefined {
  if (value === undefined || value === null || value === '') {
    if (required) throw invalidArgument(field, 'required', `${field} must be a non-empty string`);
    return undefined;
  }
  if (typeof value !== 'string' || value.trim() === '') throw invalidArgument(field, 'non_empty_string', `${field} must be a non-empty string`);
  const v = stripLoneSurrogates(value.trim());
  if (codePointLength(v) > 256) throw invalidArgument(field, 'max_length', `${field} exceeds maximum length of 256 characters`);
  if ([...v].some((c) => c.codePointAt(0)! < 0x20 || c.codePointAt(0) === 0x7f))
    throw invalidArgument(field, 'control_characters', `${field} contains control characters`);
  return v;
}

const EVENT_TYPE_RE = /^[a-z0-9][a-z0-9_.-]{0,63}$/;

export function validateEventType(value: unknown, field = 'type'): string {
  if (typeof value !== 'string' || value.trim() === '') throw invalidArgument(field, 'non_empty_string', `${field} must be a non-empty string`);
  const v = value.trim();
  if (!EVENT_TYPE_RE.test(v))
    throw invalidArgument(field, 'event_type_pattern',
      `${field}='${v}' is not a valid event type (lowercase letters, digits, '_', '.', '-'; at most 64 characters; starting with a letter or digit)`);
  return v;
}

export const EVENT_STATUSES = ['applied', 'blocked', 'claimed', 'failed', 'open', 'ready', 'superseded'] as const;

/** Wing slug derived from a directory name (docs/palace-behaviour.md §2.5): lowercase, spaces and hyphens to `_`. */
export function wingSlug(name: string): string {
  return name.toLowerCase().replace(/[ -]/g, '_');
}
