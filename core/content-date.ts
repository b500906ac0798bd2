/**
 * The `content_date` of a mined file (docs/palace-behaviour.md §4.7.3): the date the content is about,
 * from the file name, YAML front matter, the first lines of the body, or the file's mtime, first
 * hit wins. Only complete dates count; nothing is parsed fuzzily.
 */
import { parse as parseYaml } from 'yaml';

// Python `\b` around `\w` = letter, digit or underscore.
const NOT_WORD_BEFORE = String.raw`(?<![\p{L}\p{N}_])`;
const NOT_WORD_AFTER = String.raw`(?![\p{L}\p{N}_])`;
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const MONTH_ALT = String
  .raw`(january|february|march|april|may|june|july|august|september|october|november|december|sept|jan|feb|mar|apr|jun|jul|aug|sep|oct|nov|dec)`;
const ORDINAL = '(?:st|nd|rd|th)?';

const ISO_RE = new RegExp(String.raw`${NOT_WORD_BEFORE}([0-9]{4})[-/.]([0-9]{1,2})[-/.]([0-9]{1,2})${NOT_WORD_AFTER}`, 'u');
const SLASH_RE = new RegExp(String.raw`${NOT_WORD_BEFORE}([0-9]{1,2})[/-]([0-9]{1,2})[/-]([0-9]{2,4})${NOT_WORD_AFTER}`, 'gu');
/** The three complete shapes of docs/palace-behaviour.md §4.7.3 1b: Y-M-D, month D Y, D month Y. */
const SHAPES: readonly { re: RegExp; ymd: (m: RegExpExecArray) => [string, string, string] }[] = [
  {
    re: new RegExp(String.raw`${NOT_WORD_BEFORE}([0-9]{4})(?:[-/.]|\s+)([0-9]{1,2})(?:[-/.]|\s+)([0-9]{1,2})${NOT_WORD_AFTER}`, 'u'),
    ymd: (m) => [m[1]!, m[2]!, m[3]!],
  },
  {
    re: new RegExp(String.raw`${NOT_WORD_BEFORE}${MONTH_ALT}\.?\s+([0-9]{1,2})${ORDINAL},?\s+([0-9]{4})${NOT_WORD_AFTER}`, 'iu'),
    ymd: (m) => [m[3]!, monthNumber(m[1]!), m[2]!],
  },
  {
    re: new RegExp(String.raw`${NOT_WORD_BEFORE}([0-9]{1,2})${ORDINAL}\s+${MONTH_ALT}\.?,?\s+([0-9]{4})${NOT_WORD_AFTER}`, 'iu'),
    ymd: (m) => [m[3]!, monthNumber(m[2]!), m[1]!],
  },
];

function monthNumber(name: string): string {
  const lower = name.toLowerCase();
  return String(MONTHS.findIndex((m) => m.startsWith(lower.slice(0, 3))) + 1);
}

/** `YYYY-MM-DD` if the parts form a real calendar date (years 1–9999), else undefined. */
export function calendarDate(year: string | number, month: string | number, day: string | number): string | undefined {
  const y = Number(year);
  const m = Number(month);
  const d = Number(day);
  if (![y, m, d].every(Number.isInteger) || y < 1 || y > 9999 || m < 1 || m > 12 || d < 1) return undefined;
  const t = new Date(Date.UTC(2000, m - 1, d));
  t.setUTCFullYear(y);
  if (t.getUTCMonth() !== m - 1 || t.getUTCDate() !== d) return undefined;
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/** The first ISO-like match, if it is a real date (an invalid first match is not retried). */
function isoDate(text: string): string | undefined {
  const m = ISO_RE.exec(text);
  return m ? calendarDate(m[1]!, m[2]!, m[3]!) : undefined;
}

/** The earliest complete shaped date in `text`, parsed exactly; undefined if none or invalid. */
function shapedDate(text: string): string | undefined {
  let best: { index: number; ymd: [string, string, string] } | undefined;
  for (const shape of SHAPES) {
    const m = shape.re.exec(text);
    if (m && (best === undefined || m.index < best.index)) best = { index: m.index, ymd: shape.ymd(m) };
  }
  return best ? calendarDate(...best.ymd) : undefined;
}

/** Step 1: from the file name's stem. */
export function dateFromFileName(fileName: string): string | undefined {
  const base = fileName.split(/[\\/]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  const stem = dot > 0 ? base.slice(0, dot) : base;
  const iso = isoDate(stem);
  if (iso) return iso;
  const cleaned = stem.replace(new RegExp(String.raw`([0-9])(?:st|nd|rd|th)${NOT_WORD_AFTER}`, 'giu'), '$1').replace(/[-_]/g, ' ');
  return shapedDate(cleaned);
}

/** A front-matter value that is a date: a YAML timestamp, an ISO date(-time) or a shaped date. */
function dateValue(value: unknown): string | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.toISOString().slice(0, 10);
  if (typeof value !== 'string') return undefined;
  const iso = /^\s*([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:$|[T\s])/u.exec(value);
  if (iso) return calendarDate(iso[1]!, iso[2]!, iso[3]!);
  return shapedDate(value);
}

/** Splits YAML front matter (`---` … `\n---`) from the body; no front matter gives the text. */
export function splitFrontMatter(text: string): { frontMatter: string | null; body: string } {
  const t = text.trimStart();
  if (!t.startsWith('---')) return { frontMatter: null, body: text };
  const close = t.indexOf('\n---', 3);
  if (close < 0) return { frontMatter: null, body: text };
  const firstNewline = t.indexOf('\n');
  const frontMatter = t.slice(firstNewline, close);
  const afterClose = t.indexOf('\n', close + 4);
  return { frontMatter, body: afterClose < 0 ? '' : t.slice(afterClose + 1) };
}

/** Step 2: `date`, `created` or `published` of the YAML front matter. */
export function dateFromFrontMatter(frontMatter: string): string | undefined {
  let doc: unknown;
  try {
    doc = parseYaml(frontMatter);
  } catch {
    return undefined;
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return undefined;
  for (const key of ['date', 'created', 'published']) {
    const d = dateValue((doc as Record<string, unknown>)[key]);
    if (d !== undefined) return d;
  }
  return undefined;
}

function fullYear(y: string): number {
  const n = Number(y);
  if (y.length !== 2) return n;
  return n >= 70 ? 1900 + n : 2000 + n;
}

/** Step 3: the first 10 lines of the body: ISO, then slash dates, then shaped dates. */
export function dateFromBody(body: string): string | undefined {
  const head = body.split('\n').slice(0, 10).join('\n');
  const iso = isoDate(head);
  if (iso) return iso;
  const slashes = [...head.matchAll(SLASH_RE)];
  if (slashes.length > 0) {
    // Day-first if any match's first number exceeds 12.
    const dayFirst = slashes.some((m) => Number(m[1]) > 12);
    const [, a, b, y] = slashes[0]!;
    const d = dayFirst ? calendarDate(fullYear(y!), b!, a!) : calendarDate(fullYear(y!), a!, b!);
    if (d) return d;
  }
  return shapedDate(head);
}

/** The calendar date of an instant, in local time (the spec) or UTC. */
export function dateOfInstant(ms: number, zone: 'local' | 'utc' = 'local'): string | undefined {
  const t = new Date(ms);
  if (Number.isNaN(t.getTime())) return undefined;
  return zone === 'utc'
    ? calendarDate(t.getUTCFullYear(), t.getUTCMonth() + 1, t.getUTCDate())
    : calendarDate(t.getFullYear(), t.getMonth() + 1, t.getDate());
}

export interface ContentDateInput {
  /** File name or path; only the last component's stem is read. */
  fileName: string;
  text: string;
  /** Modification time in epoch milliseconds, if the file could be stat'ed. */
  mtimeMs?: number | undefined;
  /** Which calendar the mtime fallback uses; the spec says local time. */
  mtimeZone?: 'local' | 'utc';
}

/** docs/palace-behaviour.md §4.7.3: `YYYY-MM-DD` from name, front matter, body or mtime; undefined if none. */
export function contentDate(input: ContentDateInput): string | undefined {
  const fromName = dateFromFileName(input.fileName);
  if (fromName) return fromName;
  const { frontMatter, body } = splitFrontMatter(input.text);
  if (frontMatter !== null) {
    const fromFront = dateFromFrontMatter(frontMatter);
    if (fromFront) return fromFront;
  }
  const fromBody = dateFromBody(body);
  if (fromBody) return fromBody;
  return input.mtimeMs === undefined ? undefined : dateOfInstant(input.mtimeMs, input.mtimeZone);
}
