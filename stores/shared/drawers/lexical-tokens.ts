/**
 * Which query tokens a lexical candidate fetch matches on, the same in every adapter.
 *
 * FTS5's bm25 gives a token found in at least half of the rows an idf of 1e-6 (its formula's idf
 * is ≤ 0 there and is clamped), so such a token adds at most ~2.2e-6 to a row's score: rows
 * holding only such tokens rank below nearly every row holding another query token (only a token
 * in just under half the rows has an idf that small), yet ranking every row that contains "the"
 * was most of a union search's time on a large palace. The candidate fetch therefore matches and
 * ranks on the tokens found in at least one and fewer than half of the rows, and on all of them
 * when there is no such token (a token found nowhere, e.g. a stop word the index never holds,
 * must not push the common ones out). The order changes only between rows whose scores differ by
 * less than those clamped contributions, and both profiles apply the same rule, so they still
 * return the same candidates.
 */

/** Positions of the tokens to match on, given each token's document frequency among `rows`. */
export function informativeTokenPositions(documentFrequency: readonly number[], rows: number): number[] {
  const positions = documentFrequency.flatMap((n, i) => (n > 0 && 2 * n < rows ? [i] : []));
  return positions.length > 0 ? positions : documentFrequency.map((_, i) => i);
}

/** The case folding of the lexical index in both profiles (FTS5's ascii tokenizer, the OpenSearch field's terms). */
export function asciiLower(token: string): string {
  return token.replace(/[A-Z]/g, (c) => c.toLowerCase());
}
