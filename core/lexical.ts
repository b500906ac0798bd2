/**
 * The product's own lexical analysis (docs/decisions.md palace 8). Both profiles index the
 * token stream produced here with a plain whitespace analyser and compute BM25 themselves over
 * the candidate pool, so a given pool ranks identically whatever engine stored it.
 */

// An identifier-like run: word characters joined by `.`, `-` or `_` (the last is a word char).
const RUN = /[\p{L}\p{N}\p{M}_]+(?:[.-][\p{L}\p{N}\p{M}_]+)*/gu;
// Case and letter/digit transitions inside one identifier segment.
const CAMEL_PART = /\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?\p{Ll}+\p{M}*|\p{Lu}+\p{M}*|\p{N}+|[\p{L}\p{M}]+/gu;
const MIN_TOKEN = 2;

function parts(run: string): string[] {
  const out: string[] = [];
  for (const segment of run.split(/[._-]+/)) {
    if (segment === '') continue;
    for (const m of segment.matchAll(CAMEL_PART)) out.push(m[0]);
  }
  return out;
}

/**
 * Lowercased tokens of `text`: every identifier whole, followed by its parts when it has more
 * than one (`parseHttpURL` → `parsehttpurl parse http url`). Tokens shorter than two code
 * points are dropped, as in the BM25 of the spec (docs/palace-behaviour.md §8.5).
 */
export function lexicalTokens(text: string | null | undefined): string[] {
  if (!text) return [];
  const tokens: string[] = [];
  for (const m of text.matchAll(RUN)) {
    const run = m[0];
    const whole = run.toLowerCase();
    if ([...whole].length >= MIN_TOKEN) tokens.push(whole);
    const ps = parts(run);
    if (ps.length > 1) {
      for (const p of ps) {
        const lp = p.toLowerCase();
        if ([...lp].length >= MIN_TOKEN) tokens.push(lp);
      }
    }
  }
  return tokens;
}

/** The whitespace-joined token stream the engines index. */
export function lexicalText(text: string): string {
  return lexicalTokens(text).join(' ');
}

export const BM25_K1 = 1.5;
export const BM25_B = 0.75;

/**
 * BM25 of each document against the query, with IDF relative to the given candidate pool
 * (docs/palace-behaviour.md §8.5). Scores are raw (unnormalised).
 */
export function bm25Scores(query: string, documents: readonly string[]): number[] {
  const q = lexicalTokens(query);
  if (q.length === 0) return new Array<number>(documents.length).fill(0);
  return bm25ScoresOfTokens(q, documents.map((d) => lexicalTokens(d)));
}

/** bm25Scores over texts already cut into tokens (by lexicalTokens, possibly mapped further, e.g. to word stems). */
export function bm25ScoresOfTokens(query: readonly string[], docs: readonly (readonly string[])[]): number[] {
  const q = new Set(query);
  const n = docs.length;
  const none = new Array<number>(n).fill(0);
  if (q.size === 0 || n === 0) return none;
  const total = docs.reduce((s, t) => s + t.length, 0);
  if (total === 0) return none;
  const avgdl = total / n || 1;
  const df = new Map<string, number>();
  const tfs = docs.map((tokens) => {
    const tf = new Map<string, number>();
    for (const t of tokens) if (q.has(t)) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const t of tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
    return tf;
  });
  const idf = (t: string) => {
    const d = df.get(t) ?? 0;
    return Math.log((n - d + 0.5) / (d + 0.5) + 1);
  };
  return tfs.map((tf, i) => {
    const dl = docs[i]!.length;
    let score = 0;
    for (const [t, f] of tf) score += (idf(t) * f * (BM25_K1 + 1)) / (f + BM25_K1 * (1 - BM25_B + (BM25_B * dl) / avgdl));
    return score;
  });
}
