/**
 * Which rows a lexical candidate fetch returns, decided the way the embedded profile decides it,
 * so both profiles hand the product the same candidate set (docs/decisions.md palace 8). The embedded adapter
 * orders matches by SQLite FTS5's `bm25()` over its whole table, then by id; this computes that
 * same function from statistics the adapter reads exactly from OpenSearch (row count, total
 * token count, per-token document frequency) and from each candidate row's stored token stream
 * (its length and per-token frequency), instead of taking
 * Lucene's score (whose document lengths are lossy and whose statistics count deleted documents).
 *
 * FTS5 bm25 with one column and default weights, k1 = 1.2, b = 0.75:
 *   idf(t)   = ln((N − n(t) + 0.5) / (n(t) + 0.5)), replaced by 1e-6 when ≤ 0
 *   score(D) = Σ over query phrases in query order of idf(t) · (f(t,D)·(k1+1) / (f(t,D) + k1·(1 − b + b·|D|/avgdl)))
 * where N is the table's row count and avgdl its total token count / N. Rows are ordered by
 * score descending (FTS5 returns its negation, ascending), then by id in byte order. The
 * arithmetic is grouped as in FTS5's C code (fts5_aux.c), so the doubles are the same.
 */
import { utf8Compare } from '../shared/drawers/utf8-order.js';

const K1 = 1.2;
const B = 0.75;
const MIN_IDF = 1e-6;

export interface CorpusStats {
  rows: number;
  tokens: number;
  /** Documents containing each query token, in query-token order. */
  documentFrequency: number[];
}

export interface LexicalMatch {
  id: string;
  /** Tokens in the row. */
  length: number;
  /** Occurrences of each query token in the row, in query-token order. */
  frequency: number[];
}

export function idfs(stats: CorpusStats): number[] {
  return stats.documentFrequency.map((n) => {
    const idf = Math.log((stats.rows - n + 0.5) / (n + 0.5));
    return idf <= 0 ? MIN_IDF : idf;
  });
}

export function fts5Score(match: LexicalMatch, idf: readonly number[], avgdl: number): number {
  const d = K1 * (1 - B + (B * match.length) / avgdl);
  let score = 0;
  for (let i = 0; i < idf.length; i++) {
    const f = match.frequency[i] ?? 0;
    score += idf[i]! * ((f * (K1 + 1)) / (f + d));
  }
  return score;
}

/** A row's match: its length and each term's occurrences, counted in its stored token stream. */
export function lexicalMatch(id: string, stream: string, terms: readonly string[]): LexicalMatch {
  const tokens = stream === '' ? [] : stream.split(' ');
  const position = new Map(terms.map((t, i) => [t, i]));
  const frequency = terms.map(() => 0);
  for (const token of tokens) {
    const i = position.get(token);
    if (i !== undefined) frequency[i]!++;
  }
  return { id, length: tokens.length, frequency };
}

/** The `k` best matches in FTS5 `bm25()` order, ties by id. */
export function rankLikeFts5(matches: readonly LexicalMatch[], stats: CorpusStats, k: number): LexicalMatch[] {
  if (stats.rows === 0) return [];
  const idf = idfs(stats);
  const avgdl = stats.tokens / stats.rows;
  return matches
    .map((m) => ({ m, score: fts5Score(m, idf, avgdl) }))
    .sort((a, b) => b.score - a.score || utf8Compare(a.m.id, b.m.id))
    .slice(0, k)
    .map((x) => x.m);
}
