/**
 * The wake-up context (docs/palace-behaviour.md §16.1, ranked by real signals rather than storage order):
 * who the agent is, the protocol in brief, then the palace's most important current facts — the
 * valid knowledge-graph facts of the entities with the most valid facts, the latest diary entries,
 * and the map of wings and rooms — cut to a token budget counted with the embedding model's
 * tokenizer. The same palace state and clock give the same text.
 */
import { WAKE_UP_PROTOCOL } from '../../core/agent-rules.js';
import { filedAtNow } from '../../core/drawer.js';
import { codePointLength, codePointSlice } from '../../core/text.js';
import type { Drawer } from '../../core/drawer.js';
import type { DrawerIndex } from '../../stores/ports/drawers/drawer-index.js';
import type { GraphStore, KgTriple } from '../../stores/ports/graph-store.js';
import { nowOf } from '../context.js';
import { taxonomy } from '../system/status.js';

export const WAKE_UP_BUDGET = 900;
const TOP_ENTITIES = 8;
const FACTS_PER_ENTITY = 6;
const TIMELINE_SCAN = 5_000;
const DIARY_ENTRIES = 5;
const DIARY_PAGE = 500;
const DIARY_WINDOWS_DAYS = [7, 90, undefined];
const LINE_CHARS = 220;

export const DEFAULT_IDENTITY = 'No identity configured. Write who you are and whom you work with to ~/.mempalace/identity.txt.';

export interface WakeUpContext {
  drawers: DrawerIndex;
  graph: GraphStore;
  /** Tokens of a text as the embedding model's tokenizer counts them. */
  countTokens(text: string): number;
  /** The identity text (`~/.mempalace/identity.txt`), or undefined when there is none. */
  identity: string | undefined;
  now?: () => Date;
}

export interface WakeUpResult {
  text: string;
  tokens: number;
  budget: number;
  wing: string | null;
  /** Lines left out to stay within the budget. */
  omitted_lines: number;
  sections: { identity: number; protocol: number; facts: number; diary: number; map: number };
}

function oneLine(text: string, n = LINE_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return codePointLength(flat) > n ? `${codePointSlice(flat, 0, n - 1)}…` : flat;
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function isValidAt(t: KgTriple, key: string): boolean {
  return (t.from_key === null || t.from_key <= key) && (t.to_key === null || t.to_key > key);
}

/** Current facts of the entities that hold the most current facts (ties by name). */
async function factLines(graph: GraphStore, nowKey: string): Promise<string[]> {
  const valid = (await graph.kgTimeline({ limit: TIMELINE_SCAN })).filter((t) => isValidAt(t, nowKey));
  const score = new Map<string, { name: string; n: number }>();
  for (const t of valid) {
    for (const [id, name] of [[t.subject_id, t.subject_name], [t.object_id, t.object_name]] as const) {
      const s = score.get(id) ?? { name, n: 0 };
      s.n++;
      score.set(id, s);
    }
  }
  const top = [...score.entries()].sort((a, b) => b[1].n - a[1].n || byText(a[1].name, b[1].name)).slice(0, TOP_ENTITIES);
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const [id] of top) {
    const facts = valid.filter((t) => (t.subject_id === id || t.object_id === id) && !seen.has(t.id))
      .sort((a, b) => byText(a.predicate, b.predicate) || byText(a.object_name, b.object_name) || byText(a.id, b.id))
      .slice(0, FACTS_PER_ENTITY);
    for (const t of facts) {
      seen.add(t.id);
      lines.push(oneLine(`- ${t.subject_name} → ${t.predicate} → ${t.object_name}${t.valid_from ? ` (since ${t.valid_from})` : ''}`));
    }
  }
  return lines;
}

/** The latest diary entries: the most recent window that holds enough of them, newest first. */
async function diaryLines(drawers: DrawerIndex, wing: string | undefined, now: Date): Promise<string[]> {
  let rows: Drawer[] = [];
  for (const days of DIARY_WINDOWS_DAYS) {
    const since = days === undefined ? undefined : filedAtNow(new Date(now.getTime() - days * 86_400_000));
    rows = [];
    for (let offset = 0; offset < 4 * DIARY_PAGE; offset += DIARY_PAGE) {
      const page = await drawers.list({ wing, room: 'diary', since }, offset, DIARY_PAGE);
      rows.push(...page.items.filter((r) => r.meta.chunk_index === 0));
      if (page.items.length < DIARY_PAGE) break;
    }
    if (rows.length >= DIARY_ENTRIES) break;
  }
  return rows
    .sort((a, b) => byText(b.meta.filed_at, a.meta.filed_at) || byText(a.id, b.id))
    .slice(0, DIARY_ENTRIES)
    .map((r) => oneLine(`- ${r.meta.filed_at.slice(0, 10)} ${typeof r.meta.agent === 'string' ? r.meta.agent : r.meta.added_by}: ${r.content}`));
}

async function mapLines(drawers: DrawerIndex, wing: string | undefined): Promise<string[]> {
  const tax = await taxonomy(drawers);
  return Object.keys(tax).sort(byText).filter((w) => wing === undefined || w === wing).map((w) => {
    const rooms = Object.entries(tax[w]!).sort((a, b) => b[1] - a[1] || byText(a[0], b[0]));
    return oneLine(`- ${w}: ${rooms.map(([r, n]) => `${r} (${n})`).join(', ')}`, 400);
  });
}

export async function wakeUp(ctx: WakeUpContext, input: { wing?: string | undefined; budget?: number | undefined } = {}): Promise<WakeUpResult> {
  const budget = input.budget ?? WAKE_UP_BUDGET;
  const now = nowOf(ctx);
  const wing = input.wing === undefined || input.wing === '' ? undefined : input.wing;
  const sections: [keyof WakeUpResult['sections'], string, string[]][] = [
    ['identity', '## Identity', (ctx.identity?.trim() || DEFAULT_IDENTITY).split('\n').map((l) => l.trimEnd()).filter((l) => l !== '')],
    ['protocol', '## Memory protocol', WAKE_UP_PROTOCOL.split('\n')],
    ['facts', '## Current facts', await factLines(ctx.graph, now.toISOString())],
    ['diary', '## Latest diary entries', await diaryLines(ctx.drawers, wing, now)],
    ['map', wing ? `## Map of ${wing}` : '## Map of the palace', await mapLines(ctx.drawers, wing)],
  ];
  // Lines are added in priority order while the whole text stays within the budget; a section
  // whose heading does not fit is left out together with its lines.
  const out: string[] = [];
  const counts = { identity: 0, protocol: 0, facts: 0, diary: 0, map: 0 };
  let omitted = 0;
  let tokens = 0;
  const fits = (lines: string[]) => {
    const t = ctx.countTokens([...out, ...lines].join('\n'));
    if (t > budget) return false;
    tokens = t;
    return true;
  };
  for (const [name, heading, lines] of sections) {
    if (lines.length === 0) continue;
    const lead = out.length === 0 ? [heading] : ['', heading];
    if (!fits([...lead, lines[0]!])) {
      omitted += lines.length;
      continue;
    }
    out.push(...lead, lines[0]!);
    counts[name]++;
    for (const line of lines.slice(1)) {
      if (fits([line])) {
        out.push(line);
        counts[name]++;
      } else omitted++;
    }
  }
  return { text: out.join('\n'), tokens, budget, wing: wing ?? null, omitted_lines: omitted, sections: counts };
}
