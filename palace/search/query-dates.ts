/**
 * Dates named in a query ("in May", "last January", "on 10 March 2026", "three weeks ago") as
 * windows of time, parsed with chrono-node, and the date a conversation exchange happened on.
 * Search uses them softly: an exchange whose session falls in a window the query names gets a
 * bonus in the fusion (search-fusion.ts), never a filter.
 *
 * Relative dates resolve against the newest session among the candidates, not the clock: a palace
 * of conversations is searched about its own past, and an imported history (or a benchmark) may
 * end years before today, where "last May" means the May before its last session. For a palace
 * that files its chats as they happen the newest session is today, so both readings agree.
 *
 * A memory is asked about the past: a date without a year that chrono places after the reference
 * ("January" asked in September) moves back a year. Expressions anchored on an event the parser
 * cannot know ("two weeks before the trip") and times without a date ("at 3am") name no window.
 */
import * as chrono from 'chrono-node';
import type { DrawerMeta } from '../../core/drawer.js';

export interface DateWindow {
  /** Epoch milliseconds, inclusive. */
  start: number;
  /** Epoch milliseconds, exclusive. */
  end: number;
}

const DAY_MS = 86_400_000;
/** A day named in a query stands for the days around it: people misremember the exact day, and "last week" is a week. */
const DAY_SLACK_MS = 3 * DAY_MS;
const MONTHS = 'january|february|march|april|may|june|july|august|september|october|november|december';
/** chrono reads "last May" as nothing; the most recent May is what a past-facing memory means by it. */
const LAST_MONTH = new RegExp(`\\b(?:last|this past|past)\\s+(${MONTHS})\\b`, 'gi');
/** A parse ending in "before"/"after" is anchored on something that follows in the query, not on the reference. */
const EVENT_ANCHORED = /\b(?:before|after)$/i;

type Component = Parameters<chrono.ParsedComponents['isCertain']>[0];

function utc(y: number, m: number, d: number): number {
  return Date.UTC(y, m, d);
}

function windowOf(components: chrono.ParsedComponents, reference: number): DateWindow | undefined {
  const certain = (c: Component) => components.isCertain(c);
  if (!certain('year') && !certain('month') && !certain('day') && !certain('weekday')) return undefined;
  let year = components.get('year')!;
  const month = components.get('month')! - 1;
  const day = components.get('day')!;
  if (!certain('year') && utc(year, month, certain('day') || certain('weekday') ? day : 1) > reference) year -= 1;
  if (certain('day') || certain('weekday')) {
    const at = utc(year, month, day);
    return { start: at - DAY_SLACK_MS, end: at + DAY_MS + DAY_SLACK_MS };
  }
  if (certain('month')) return { start: utc(year, month, 1), end: utc(year, month + 1, 1) };
  return { start: utc(year, 0, 1), end: utc(year + 1, 0, 1) };
}

/** The windows of time `query` names, relative dates resolved against `reference` (epoch ms). */
export function queryDateWindows(query: string, reference: number): DateWindow[] {
  const text = query.replace(LAST_MONTH, 'in $1');
  const windows: DateWindow[] = [];
  for (const result of chrono.parse(text, { instant: new Date(reference), timezone: 'UTC' })) {
    if (EVENT_ANCHORED.test(result.text)) continue;
    const start = windowOf(result.start, reference);
    if (!start) continue;
    const end = result.end ? windowOf(result.end, reference) : undefined;
    windows.push(end && end.end > start.start ? { start: start.start, end: end.end } : start);
  }
  return windows;
}

/**
 * When a conversation exchange happened (epoch ms): its session's date when the filer recorded one,
 * else when it was filed (a hook saves a session as it happens). Other drawers have no such date.
 */
export function sessionDate(meta: DrawerMeta): number | undefined {
  if (meta.ingest_mode !== 'convos') return undefined;
  const recorded = typeof meta.session_date === 'string' ? Date.parse(meta.session_date) : Number.NaN;
  const at = Number.isFinite(recorded) ? recorded : Date.parse(meta.filed_at ?? '');
  return Number.isFinite(at) ? at : undefined;
}
