/**
 * Mega-file splitting (docs/palace-behaviour.md §5.9): a `.txt` holding several concatenated Claude Code terminal
 * sessions is cut at each true session start into one file per session, named from the source,
 * the session's timestamp, the people in it and its first real prompt. Pure: the caller reads
 * the file, writes the parts and renames the original to `.mega_backup`.
 */
import { strip } from '../text.js';

export const DEFAULT_MIN_SESSIONS = 2;
const SESSION_MARKER = 'Claude Code v';
const RESTORE_MARKERS = ['Ctrl+E', 'previous messages'];
const START_WINDOW_LINES = 6;
const MIN_PART_LINES = 10;
const TIMESTAMP_SCAN_LINES = 50;
const PEOPLE_SCAN_LINES = 100;
const MAX_PEOPLE = 3;
const MAX_STEM = 40;
const MAX_SUBJECT = 60;

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const TIMESTAMP = /⏺\s+(\d{1,2}):(\d{2})\s*([AP]M)\s+\p{L}+,\s+(\p{L}+)\s+(\d{1,2}),\s+(\d{4})/u;
const SHELL_COMMAND =
  /^(?:cd|ls|git|python3?|pip3?|npm|npx|node|cat|echo|mkdir|rm|cp|mv|grep|curl|wget|docker|make|sudo|brew|source|export|bash|sh)(?:\s|$)|^[./~]/u;

export interface MegaSplitOptions {
  /** The source file's name without directory or extension. */
  sourceStem: string;
  /** Names of people to look for (config), matched as whole words, case-insensitively. */
  knownNames?: readonly string[];
  /** Username → display name, applied to `/Users/<username>/` paths in the session. */
  usernameMap?: Readonly<Record<string, string>>;
  minSessions?: number;
}

export interface SessionPart {
  fileName: string;
  /** The session's lines, verbatim (original line endings kept). */
  content: string;
  lineCount: number;
}

export interface MegaSplitPlan {
  sessionStarts: number;
  parts: SessionPart[];
  /** Fragments under 10 lines that are not written (they stay in the `.mega_backup`). */
  skippedFragments: number;
}

/** Line indexes where a new session starts (not a context restore). */
export function sessionStarts(lines: readonly string[]): number[] {
  const starts: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.includes(SESSION_MARKER)) continue;
    const window = lines.slice(i, i + START_WINDOW_LINES);
    if (!window.some((l) => RESTORE_MARKERS.some((m) => l.includes(m)))) starts.push(i);
  }
  return starts;
}

function sessionTimestamp(lines: readonly string[]): string | null {
  for (const line of lines.slice(0, TIMESTAMP_SCAN_LINES)) {
    const m = TIMESTAMP.exec(line);
    if (m === null) continue;
    const month = MONTHS.indexOf(m[4]!.toLowerCase());
    if (month < 0) continue;
    const dd = m[5]!.padStart(2, '0');
    const mm = String(month + 1).padStart(2, '0');
    return `${m[6]}-${mm}-${dd}_${Number(m[1])}${m[2]}${m[3]}`;
  }
  return null;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function sessionPeople(lines: readonly string[], knownNames: readonly string[], usernameMap: Readonly<Record<string, string>>): string[] {
  const head = lines.slice(0, PEOPLE_SCAN_LINES).join('\n');
  const people: string[] = [];
  for (const name of knownNames) {
    const pattern = new RegExp(`(?<![\\p{L}\\p{N}_])${escapeRegExp(name)}(?![\\p{L}\\p{N}_])`, 'iu');
    if (pattern.test(head) && !people.includes(name)) people.push(name);
  }
  for (const m of head.matchAll(/\/Users\/([^/\s]+)\//gu)) {
    const mapped = usernameMap[m[1]!];
    if (mapped !== undefined && !people.includes(mapped)) people.push(mapped);
  }
  return people.slice(0, MAX_PEOPLE);
}

function sessionSubject(lines: readonly string[]): string {
  for (const line of lines) {
    if (!line.startsWith('> ')) continue;
    const prompt = strip(line.slice(2));
    if ([...prompt].length <= 5 || SHELL_COMMAND.test(prompt)) continue;
    const words = strip(prompt.replace(/[^\p{L}\p{N}_\s-]/gu, '')).replace(/\s+/gu, '-');
    const subject = [...words].slice(0, MAX_SUBJECT).join('');
    if (subject !== '') return subject;
  }
  return 'session';
}

function safeFileName(name: string): string {
  return name.replace(/[^\p{L}\p{N}_.-]/gu, '_').replace(/_+/g, '_');
}

/** Plan the split of one file; `parts` is empty when it has fewer than `minSessions` starts. */
export function planMegaSplit(content: string, options: MegaSplitOptions): MegaSplitPlan {
  const withEndings = content.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const lines = withEndings.map((l) => l.replace(/\r?\n$/, ''));
  const starts = sessionStarts(lines);
  const minSessions = options.minSessions ?? DEFAULT_MIN_SESSIONS;
  if (starts.length < minSessions) return { sessionStarts: starts.length, parts: [], skippedFragments: 0 };

  const stem = [...options.sourceStem.replace(/[^\p{L}\p{N}_]/gu, '_')].slice(0, MAX_STEM).join('');
  // Lines before the first start belong to the first session, so nothing is lost.
  const bounds = [0, ...starts.slice(1), lines.length];
  const parts: SessionPart[] = [];
  const used = new Set<string>();
  let skippedFragments = 0;
  for (let k = 0; k + 1 < bounds.length; k++) {
    const partLines = lines.slice(bounds[k], bounds[k + 1]);
    if (partLines.length < MIN_PART_LINES) {
      skippedFragments++;
      continue;
    }
    const when = sessionTimestamp(partLines) ?? `part${String(k + 1).padStart(2, '0')}`;
    const people = sessionPeople(partLines, options.knownNames ?? [], options.usernameMap ?? {}).join('-');
    const base = safeFileName(`${stem}__${when}_${people}_${sessionSubject(partLines)}`);
    let fileName = `${base}.txt`;
    for (let n = 2; used.has(fileName); n++) fileName = `${base}_${n}.txt`;
    used.add(fileName);
    parts.push({ fileName, content: withEndings.slice(bounds[k], bounds[k + 1]).join(''), lineCount: partLines.length });
  }
  return { sessionStarts: starts.length, parts, skippedFragments };
}
