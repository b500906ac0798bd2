/**
 * The embedded profile's lexical candidate fetch: which rows FTS5 ranks with `bm25()`.
 *
 * FTS5 computes `bm25()` for every row its MATCH yields (~2 µs a row here: a length lookup and a
 * position-list walk per row), so ranking every row that holds a query word found in up to half
 * of a large palace's rows was most of a union search's time (bench/README.md, issue 27).
 * At or below the exact-scan bound (exact-scan.ts), or where every kept token's rows fit the
 * scoring budget, the fetch is the exact one: every row holding a kept token, ranked by `bm25()`
 * then id, so both profiles still return the same candidates there. Above that the rows
 * ranked are bounded: those holding one of the rarest kept tokens, as many of the rarest as
 * their rows fit `SCORED_ROWS_MAX` (when even the rarest alone does not fit, those holding all
 * of the few rarest, enough of them that their estimated common rows fit). Each of those rows
 * gets its exact score on every kept token, from the same `bm25()` over the same statistics
 * (adding the rarest tokens' terms first, so a score may differ from the exact one in its last
 * bit), so within them the order is the exact order; only rows holding none of the rarest
 * tokens (or not all of them) are left out. This is the embedded counterpart of the OpenSearch
 * leg's window (stores/opensearch/lexical-rank.ts): a bounded set of the likeliest rows, ranked
 * exactly.
 *
 * Exact scores for "rows holding X" (X: the rarest tokens, joined by OR or AND) on all tokens,
 * in FTS5: `bm25()` sums over every phrase of the MATCH expression, so X must not be repeated.
 * Rows holding X and another token R are matched by `(X) AND (R1 OR R2 …)` and get their full
 * score; rows holding X alone by `X`, whose score is then full too (no R occurs in them). Taking
 * the top k of each suffices: a row of the second set in the true top k has fewer than k rows
 * above it in `X`'s own order, because a row's score on X alone is at most its full score.
 */
import type Database from 'better-sqlite3';
import type { DrawerFilter } from '../../ports/drawers/drawer-index.js';
import { exactScanBound } from '../../shared/drawers/exact-scan.js';
import { filterIsEmpty } from '../../shared/drawers/filter-rules.js';
import { asciiLower, informativeTokenPositions } from '../../shared/drawers/lexical-tokens.js';
import { filterCondition } from './filter-sql.js';
import type { SqlCondition } from './filter-sql.js';
import type { FtsStatistics } from './fts-statistics.js';
import { utf8Compare } from '../../shared/drawers/utf8-order.js';

/**
 * Rows whose `bm25()` a bounded fetch may compute (each is ranked twice, by the two queries
 * above): ~80 ms at 2 µs a row, which keeps a union search of a million-drawer palace within
 * its 250 ms (issue 27).
 */
export const SCORED_ROWS_MAX = 20_000;
/** Rows read past 2k when FTS5 ranks alone, so that ties with the k-th rarely need a second read. */
const TIE_SLACK = 20;

/** The tokens FTS5 matches, each with the rows holding it (case-folded, non-empty, distinct). */
export interface TokenRows {
  token: string;
  rows: number;
}

/** Rank every row holding one of `tokens`; or only rows holding `essential` (any or all of them), scored on `essential` and `rest`. */
export type LexicalPlan =
  | { exact: true; tokens: string[] }
  | { exact: false; essential: string[]; join: 'OR' | 'AND'; rest: string[] };

/**
 * Which rows to rank for a top `k` among the rows a filter passes (`scope`, counted only when
 * needed) of a palace of `rows` rows. A filter's share of the rows scales each token's count
 * (FTS5 scores only the rows the filter passes).
 */
export function lexicalPlan(tokens: readonly TokenRows[], rows: number, scope: () => number, k: number, budget = SCORED_ROWS_MAX): LexicalPlan {
  const kept = informativeTokenPositions(tokens.map((t) => t.rows), rows).map((i) => tokens[i]!);
  const exact: LexicalPlan = { exact: true, tokens: kept.map((t) => t.token) };
  const total = kept.reduce((sum, t) => sum + t.rows, 0);
  if (rows <= exactScanBound(k) || total <= budget) return exact;
  const passing = scope();
  const share = passing / rows;
  if (passing <= exactScanBound(k) || total * share <= budget) return exact;
  const scored = (t: TokenRows): number => t.rows * share;
  // A token found nowhere matches no row and adds nothing to a score (informativeTokenPositions
  // keeps it only when no token is informative), so it never stands for the rarest.
  const rarest = kept.flatMap((t, position) => (t.rows > 0 ? [{ ...t, position }] : [])).sort((a, b) => a.rows - b.rows || a.position - b.position);
  const inQueryOrder = (chosen: typeof rarest) => {
    const positions = new Set(chosen.map((t) => t.position));
    return {
      essential: kept.filter((_, i) => positions.has(i)).map((t) => t.token),
      rest: kept.filter((t, i) => t.rows > 0 && !positions.has(i)).map((t) => t.token),
    };
  };
  let any = 0;
  for (let sum = 0; any < rarest.length && sum + scored(rarest[any]!) <= budget; any++) sum += scored(rarest[any]!);
  if (any > 0) return { exact: false, join: 'OR', ...inQueryOrder(rarest.slice(0, any)) };
  // Not even the rarest token fits: rows holding all of the rarest few, estimating their count
  // as if the tokens occurred independently (common words co-occur more, so it may be more).
  if (rarest.length < 2) return exact;
  let all = 1;
  for (let estimate = scored(rarest[0]!); all < rarest.length && estimate > budget; all++) estimate *= rarest[all]!.rows / rows;
  return { exact: false, join: 'AND', ...inQueryOrder(rarest.slice(0, all)) };
}

const phrase = (token: string): string => `"${token.replaceAll('"', '""')}"`;

interface Ranked {
  seq: number;
  /** `bm25()`: the negated score, lower is better. */
  score: number;
  id: string;
}

const byScoreThenId = (a: Ranked, b: Ranked): number => a.score - b.score || utf8Compare(a.id, b.id);

/**
 * The top `k` rows matching `match` among those passing `cond`, by (`bm25()`, id). Unfiltered,
 * FTS5 ranks alone and only the rows tied with the k-th or better are looked up for their ids:
 * joining every matching row to `drawers` for its id doubled the cost at a million rows (one
 * B-tree lookup in a 3.7 GB table per row).
 */
function topRows(db: Database.Database, match: string, k: number, cond: SqlCondition): Ranked[] {
  if (cond.sql !== '1') {
    return db
      .prepare(`SELECT d.seq AS seq, bm25(drawer_fts) AS score, d.id AS id FROM drawer_fts JOIN drawers d ON d.seq = drawer_fts.rowid
        WHERE drawer_fts MATCH ? AND ${cond.sql} ORDER BY score, d.id LIMIT ?`)
      .all(match, ...cond.params, k) as Ranked[];
  }
  const ranked = db.prepare('SELECT rowid, bm25(drawer_fts) AS score FROM drawer_fts WHERE drawer_fts MATCH ? ORDER BY score LIMIT ?').raw();
  // Rows tied with the k-th may lie past it in FTS5's order: read until a worse score shows.
  for (let limit = 2 * k + TIE_SLACK;; limit *= 2) {
    const rows = ranked.all(match, limit) as [number, number][];
    const cut = rows[Math.min(k, rows.length) - 1]?.[1];
    if (rows.length === limit && rows[limit - 1]![1] === cut) continue;
    const kept = rows.filter(([, score]) => score <= cut!);
    const ids = db.prepare('SELECT d.seq, d.id FROM json_each(?) AS j CROSS JOIN drawers d ON d.seq = j.value').raw().all(
      JSON.stringify(kept.map(([seq]) => seq)),
    );
    const idOf = new Map(ids as [number, string][]);
    return kept.map(([seq, score]) => ({ seq, score, id: idOf.get(seq)! })).sort(byScoreThenId).slice(0, k);
  }
}

/** The `seq`s of the top `k` rows under `plan` among those passing `cond`, in `bm25()` order, ties by id. */
export function lexicalWinners(db: Database.Database, plan: LexicalPlan, k: number, cond: SqlCondition): number[] {
  if (plan.exact) return topRows(db, plan.tokens.map(phrase).join(' OR '), k, cond).map((r) => r.seq);
  const essential = plan.essential.map(phrase).join(` ${plan.join} `);
  const alone = topRows(db, essential, k, cond);
  if (plan.rest.length === 0) return alone.map((r) => r.seq);
  // A row holding a rest token is in both lists; its score in the first (lower: bm25() is negated) is its full one.
  const best = new Map<number, Ranked>();
  for (const r of [...topRows(db, `(${essential}) AND (${plan.rest.map(phrase).join(' OR ')})`, k, cond), ...alone]) {
    const seen = best.get(r.seq);
    if (seen === undefined || r.score < seen.score) best.set(r.seq, r);
  }
  return [...best.values()].sort(byScoreThenId).slice(0, k).map((r) => r.seq);
}

/**
 * The `seq`s of the lexical candidates for `tokens` (distinct, non-empty) in `bm25()` order:
 * the exact top `k`, or the bounded one above the exact-scan bound and `budget`.
 */
export function lexicalSeqs(
  db: Database.Database,
  statistics: FtsStatistics,
  tokens: readonly string[],
  k: number,
  filter: DrawerFilter | undefined,
  budget = SCORED_ROWS_MAX,
): number[] {
  const rows = statistics.rows();
  const counted = tokens.map((token) => ({ token, rows: statistics.documentFrequency(asciiLower(token)) }));
  const cond = filterCondition(filter);
  const scope = () => filterIsEmpty(filter) ? rows : db.prepare(`SELECT count(*) FROM drawers d WHERE ${cond.sql}`).pluck().get(...cond.params) as number;
  return lexicalWinners(db, lexicalPlan(counted, rows, scope, k, budget), k, cond);
}
