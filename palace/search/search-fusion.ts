/**
 * The ranking of a search's candidate pool: a convex combination of two per-query normalised
 * scores, the drawer's cosine similarity to the query and its BM25 over the pool, each turned
 * into a z-score over the pool (its distance from the pool's mean in standard deviations).
 * z-scores put both signals on one scale whatever the query, so a fixed weight means the same
 * thing for every query; raw mixes (cosine + BM25) and rank fusion (RRF) were measured to lose
 * to the better single retriever (bench/README.md, "Ranking").
 *
 * The lexical weight depends on what a candidate holds and on the query's shape:
 * - a bare identifier (`parseHttpUrl`, `event_wait`, `os.path.join`): words are the evidence;
 * - a natural-language question over code: the encoder is strong there, words add little;
 * - prose and conversation exchanges: names, numbers and rare words carry more than over code.
 *
 * Lexical evidence only adds, and may lift a candidate only as far as its semantic standing
 * allows: its lexical credit is at least 0 (missing the query's words is no evidence against a
 * drawer that says the same thing in other words) and at most its similarity z-score plus
 * LEXICAL_LIFT, so a drawer that merely repeats the query's words (a script that prints the query,
 * a list of keywords) cannot outrank drawers that are semantically close. Which words the lexical
 * leg counts is decided before (query-terms.ts).
 *
 * An exchange whose session falls in a window of time the query names ("in May", "last January")
 * gets DATE_BONUS (query-dates.ts): a preference, never a filter.
 *
 * Conversation exchanges are then scored in context: evidence in a chat clusters in one session
 * and in neighbouring turns, so an exchange takes a share of its session's best score and of its
 * best neighbour's (the exchanges just before and after it) among the candidates, after the date
 * bonus, so a dated session lifts its neighbours too.
 */
import path from 'node:path';
import type { DrawerMeta } from '../../core/drawer.js';
import { queryDateWindows } from './query-dates.js';

export type DrawerKind = 'code' | 'prose' | 'conversation';
export type QueryShape = 'identifier' | 'natural';

/** Lexical weight per query shape and drawer kind (measured: bench/README.md, "Ranking"). */
export const LEXICAL_WEIGHT: Readonly<Record<QueryShape, Readonly<Record<DrawerKind, number>>>> = {
  identifier: { code: 0.5, prose: 0.5, conversation: 0.5 },
  natural: { code: 0.1, prose: 0.2, conversation: 0.3 },
};

/** How far (in pool standard deviations) lexical credit may exceed a candidate's similarity z-score. */
export const LEXICAL_LIFT = 2.5;

/** Shares of the session's best score and of the best neighbour's that an exchange adds to its own (measured: bench/README.md, "Ranking"). */
export const SESSION_SHARE = 0.3;
export const NEIGHBOUR_SHARE = 0.2;

/** What an exchange whose session falls in a window of time the query names adds to its score, in pool standard deviations. */
export const DATE_BONUS = 1;

const PROSE_EXTENSIONS = new Set(['.md', '.markdown', '.mdx', '.txt', '.rst', '.adoc', '.org', '.tex', '.html', '.htm']);

/** Where a conversation exchange sits: its session (a transcript file or a session id) and its position there. */
export function exchangePlace(meta: DrawerMeta): { session: string; position: number } | undefined {
  if (meta.ingest_mode !== 'convos') return undefined;
  const session = typeof meta.session_id === 'string' ? `${meta.source_file}#${meta.session_id}` : meta.source_file;
  const position = Number(meta.exchange_index ?? meta.chunk_index);
  return Number.isFinite(position) ? { session, position } : undefined;
}

/** What a drawer holds: an exchange of a conversation, prose (documents, notes), or code. */
export function drawerKind(meta: DrawerMeta): DrawerKind {
  if (meta.ingest_mode === 'convos') return 'conversation';
  if (meta.ingest_mode === 'extract') return 'prose';
  const source = typeof meta.source_file === 'string' ? meta.source_file : '';
  if (source === '') return 'prose';
  const ext = path.extname(source.replace(/^.*:(?=[^/])/, '')).toLowerCase();
  return ext === '' || PROSE_EXTENSIONS.has(ext) ? 'prose' : 'code';
}

/**
 * A query is an identifier when it is one run of word characters, dots and dashes with no
 * space: the form of a symbol an agent copies from code or a log (`readFileSync`,
 * `MEMPALACE_PALACE`, `np.linalg.norm`).
 */
export function queryShape(query: string): QueryShape {
  return /^[\p{L}\p{N}_$][\p{L}\p{N}_$.:-]*$/u.test(query.trim()) ? 'identifier' : 'natural';
}

function zScores(values: readonly number[]): number[] {
  const n = values.length;
  if (n === 0) return [];
  const mean = values.reduce((s, v) => s + v, 0) / n;
  const sd = Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / n);
  return values.map((v) => (sd > 1e-12 ? (v - mean) / sd : 0));
}

export interface FusionInput {
  similarity: number;
  bm25: number;
  kind: DrawerKind;
  /** For conversation exchanges: where the exchange sits (exchangePlace). */
  place?: { session: string; position: number } | undefined;
  /** For conversation exchanges: when the session happened, epoch ms (sessionDate). */
  sessionDate?: number | undefined;
}

/** Each exchange's own score plus its shares of its session's best and its best neighbour's, among the scored candidates. */
function inConversationContext(pool: readonly FusionInput[], own: readonly number[]): number[] {
  const sessionBest = new Map<string, number>();
  const atPlace = new Map<string, number>();
  pool.forEach((c, i) => {
    if (!c.place) return;
    sessionBest.set(c.place.session, Math.max(sessionBest.get(c.place.session) ?? -Infinity, own[i]!));
    atPlace.set(`${c.place.position}@${c.place.session}`, own[i]!);
  });
  return pool.map((c, i) => {
    if (!c.place) return own[i]!;
    const neighbours = [c.place.position - 1, c.place.position + 1].flatMap((p) => atPlace.get(`${p}@${c.place!.session}`) ?? []);
    const neighbour = neighbours.length > 0 ? Math.max(...neighbours) : 0;
    return own[i]! + SESSION_SHARE * sessionBest.get(c.place.session)! + NEIGHBOUR_SHARE * neighbour;
  });
}

/** The fused score of every candidate of one pool, in input order; higher ranks first. */
export function fusedScores(query: string, pool: readonly FusionInput[]): number[] {
  const shape = queryShape(query);
  const semantic = zScores(pool.map((c) => c.similarity));
  const lexical = zScores(pool.map((c) => c.bm25));
  const own = pool.map((c, i) => {
    const w = LEXICAL_WEIGHT[shape][c.kind];
    // Words only add: a candidate missing the query's words is not penalised for it (paraphrase is the encoder's job).
    const credit = Math.max(0, Math.min(lexical[i]!, semantic[i]! + LEXICAL_LIFT));
    return (1 - w) * semantic[i]! + w * credit;
  });
  const dates = pool.flatMap((c) => (c.sessionDate === undefined ? [] : [c.sessionDate]));
  const windows = dates.length > 0 ? queryDateWindows(query, Math.max(...dates)) : [];
  const dated = windows.length === 0 ? own : own.map((s, i) => {
    const at = pool[i]!.sessionDate;
    return at !== undefined && windows.some((w) => at >= w.start && at < w.end) ? s + DATE_BONUS : s;
  });
  return inConversationContext(pool, dated);
}
