/**
 * The lexical evidence the ranking (search-fusion.ts) reads for each candidate of a pool. It is
 * the candidate's BM25 over the pool, the figure results report as `bm25_score`, except where a
 * natural-language question meets code: there both sides are folded to word stems
 * (word-stems.ts) before BM25 is taken, because code names things in their base form and
 * questions inflect them. Prose and conversation exchanges inflect as the question does, and there
 * the exact form tells passages apart ("mulching" against "mulch" in the fixture's distractor
 * sessions), so they keep the plain BM25. Identifier queries match exactly, as typed.
 * Measured: bench/README.md, "Lever table".
 */
import { bm25ScoresOfTokens } from '../../core/lexical.js';
import type { DrawerKind, QueryShape } from './search-fusion.js';
import { wordStem } from './word-stems.js';

export function lexicalEvidence(queryTokens: readonly string[], shape: QueryShape, pool: readonly { tokens: readonly string[]; kind: DrawerKind }[],
  bm25: readonly number[]): readonly number[] {
  if (shape === 'identifier' || !pool.some((c) => c.kind === 'code')) return bm25;
  const stemmed = bm25ScoresOfTokens(queryTokens.map(wordStem), pool.map((c) => c.tokens.map(wordStem)));
  return pool.map((c, i) => (c.kind === 'code' ? stemmed[i]! : bm25[i]!));
}
