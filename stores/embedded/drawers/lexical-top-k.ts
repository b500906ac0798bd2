/**
 * The k best rows of a lexical candidate fetch in FTS5 `bm25()` order (ties by id), without
 * FTS5 scoring every row that holds a common query token (MaxScore, exact):
 *
 * 1. Phrases are taken rarest first. The first e of them are "essential"; a row holding none of
 *    them scores at most R, the sum of the other phrases' bounds (idf·(k1+1) each,
 *    fts5-bm25.ts).
 * 2. FTS5 scores the rows holding an essential phrase on those phrases alone (a partial score,
 *    cheap: their postings are short). A row's full score is at most its partial score plus R.
 * 3. Rows are scored exactly (the same function, computed from the row's token stream and its
 *    FTS5 length) in order of that bound, until the next bound is below the k-th exact score.
 * 4. The answer is exact when the k-th exact score is above R: no row outside the essential
 *    postings can reach it. Otherwise one more phrase becomes essential and it starts again.
 *
 * When the essential postings would exceed `POSTINGS_BUDGET` rows the caller runs FTS5's own
 * ranking over every match instead, which gives the same rows, only slower.
 */
import type Database from 'better-sqlite3';
import { lexicalText } from '../../../core/lexical.js';
import { fts5Score, idfs, lexicalMatch, phraseScoreBound, utf8Compare } from '../../shared/drawers/fts5-bm25.js';
import type { SqlCondition } from './filter-sql.js';

/** The most postings one attempt reads through FTS5 before handing over to the full query. */
const POSTINGS_BUDGET = 200_000;
/** Rows read and scored exactly per statement. */
const SCORE_CHUNK = 64;
/** Relative margin on bounds: partial sums in another order may differ from the full sum in the last bits. */
const BOUND_SLACK = 1e-9;
/** FTS5's averages record: varints of the row count and the token count of each column. */
const AVERAGES_ROWID = 1;

/** One SQLite varint at `offset` (big-endian 7-bit groups; the ninth byte carries 8 bits). */
function readVarint(bytes: Uint8Array, offset: number): { value: number; next: number } {
  let value = 0;
  for (let i = 0; i < 9; i++) {
    const byte = bytes[offset + i]!;
    if (i === 8) return { value: value * 256 + byte, next: offset + 9 };
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return { value, next: offset + i + 1 };
  }
  return { value, next: offset + 9 };
}

/** The row and token counts FTS5's `bm25()` divides by (they count rows deleted since, as FTS5 does). */
function fts5Totals(db: Database.Database): { rows: number; tokens: number } {
  const block = db.prepare('SELECT block FROM drawer_fts_data WHERE id = ?').pluck().get(AVERAGES_ROWID) as Buffer | undefined;
  if (!block) return { rows: 0, tokens: 0 };
  const rows = readVarint(block, 0);
  return { rows: rows.value, tokens: readVarint(block, rows.next).value };
}

/** The token count of each row FTS5 holds, from its docsize table (one varint per column). */
function fts5Lengths(db: Database.Database, seqs: readonly number[]): Map<number, number> {
  const rows = db.prepare('SELECT id, sz FROM drawer_fts_docsize WHERE id IN (SELECT value FROM json_each(?))').raw().all(JSON.stringify(seqs)) as [
    number,
    Buffer,
  ][];
  return new Map(rows.map(([seq, sz]) => [seq, readVarint(sz, 0).value]));
}

const matchOf = (terms: readonly string[]) => terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(' OR ');

interface Scored {
  seq: number;
  id: string;
  score: number;
}

const best = (a: Scored, b: Scored) => b.score - a.score || utf8Compare(a.id, b.id);

/**
 * Seqs of the k best rows matching any of `terms` (case-folded, in the order FTS5 would get them
 * as phrases) and the filter, best first; `undefined` when the bounded search cannot prove its
 * answer within the budget (the caller then asks FTS5 to rank every match).
 */
export function lexicalTopK(db: Database.Database, terms: readonly string[], documentFrequency: readonly number[], k: number, cond: SqlCondition):
  | number[]
  | undefined {
  const totals = fts5Totals(db);
  if (totals.rows === 0) return [];
  const stats = { rows: totals.rows, tokens: totals.tokens, documentFrequency: [...documentFrequency] };
  const idf = idfs(stats);
  const avgdl = totals.tokens / totals.rows;
  const bound = idf.map((x, i) => (documentFrequency[i]! > 0 ? phraseScoreBound(x) : 0));
  const rarestFirst = terms.map((_, i) => i).sort((a, b) => documentFrequency[a]! - documentFrequency[b]! || a - b);
  const unfiltered = cond.sql === '1';
  const partial = (essential: string[]) =>
    (unfiltered
      ? db.prepare('SELECT rowid, bm25(drawer_fts) FROM drawer_fts WHERE drawer_fts MATCH ?').raw().all(matchOf(essential))
      : db
        .prepare(`SELECT d.seq, bm25(drawer_fts) FROM drawer_fts JOIN drawers d ON d.seq = drawer_fts.rowid WHERE drawer_fts MATCH ? AND ${cond.sql}`)
        .raw()
        .all(matchOf(essential), ...cond.params)) as [number, number][];
  const readRows = db.prepare('SELECT d.seq, d.id, d.content FROM json_each(?) AS j CROSS JOIN drawers d ON d.seq = j.value');

  let postings = 0;
  for (let e = 1; e <= terms.length; e++) {
    postings += documentFrequency[rarestFirst[e - 1]!]!;
    if (postings > POSTINGS_BUDGET) return undefined;
    const rest = rarestFirst.slice(e).reduce((sum, i) => sum + bound[i]!, 0);
    // FTS5 returns the negated score; a row's full score is at most its partial one plus `rest`.
    const candidates = partial(rarestFirst.slice(0, e).map((i) => terms[i]!)).map(([seq, negated]) => ({ seq, ceiling: -negated + rest }))
      .sort((a, b) => b.ceiling - a.ceiling);
    const scored: Scored[] = [];
    const kth = () => (scored.length >= k ? scored[k - 1]!.score : -Infinity);
    const below = (ceiling: number, score: number) => ceiling + BOUND_SLACK * (1 + Math.abs(score)) < score;
    let next = 0;
    while (next < candidates.length && !below(candidates[next]!.ceiling, kth())) {
      const chunk = candidates.slice(next, next + SCORE_CHUNK).map((c) => c.seq);
      next += chunk.length;
      const lengths = fts5Lengths(db, chunk);
      for (const row of readRows.all(JSON.stringify(chunk)) as { seq: number; id: string; content: string }[]) {
        const match = lexicalMatch(row.id, lexicalText(row.content), terms);
        const length = lengths.get(row.seq) ?? match.length;
        scored.push({ seq: row.seq, id: row.id, score: fts5Score({ ...match, length }, idf, avgdl) });
      }
      scored.sort(best);
      scored.length = Math.min(scored.length, k);
    }
    // Exact when nothing outside the essential postings can reach the k-th score (or nothing is outside).
    if (rest === 0 || (scored.length >= k && below(rest, kth()))) return scored.slice(0, k).map((s) => s.seq);
  }
  return undefined;
}
