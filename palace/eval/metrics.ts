/**
 * Retrieval measures of `mempalace eval`: recall@k (the share of a query's expected items found in
 * its first k results), MRR@10 (one over the rank of the first expected item, 0 past 10), their
 * means over queries, and the paired bootstrap of a difference between two strategies (the same
 * queries resampled with replacement; a fixed seed makes a report reproducible).
 */
import { seededRandom } from '../../core/seeded-random.js';

export const CUTOFFS = [1, 5, 10] as const;
export const MRR_DEPTH = 10;

/** Share of `expected` found among the first `k` of `ranked` (each a set of the items one result stands for). */
export function recallAt(ranked: readonly (readonly string[])[], expected: ReadonlySet<string>, k: number): number {
  if (expected.size === 0) return 0;
  const found = new Set<string>();
  for (const items of ranked.slice(0, k)) for (const item of items) if (expected.has(item)) found.add(item);
  return found.size / expected.size;
}

export function reciprocalRank(ranked: readonly (readonly string[])[], expected: ReadonlySet<string>): number {
  const i = ranked.slice(0, MRR_DEPTH).findIndex((items) => items.some((item) => expected.has(item)));
  return i < 0 ? 0 : 1 / (i + 1);
}

export const mean = (values: readonly number[]): number => (values.length === 0 ? 0 : values.reduce((s, v) => s + v, 0) / values.length);

export interface Difference {
  mean: number;
  /** 95 % interval of the mean difference. */
  low: number;
  high: number;
}

/** The mean of `a[i] − b[i]` with its 95 % paired-bootstrap interval over `rounds` resamples. */
export function pairedBootstrap(a: readonly number[], b: readonly number[], rounds = 2000, seed = 1): Difference {
  const n = a.length;
  const diff = a.map((x, i) => x - b[i]!);
  if (n === 0) return { mean: 0, low: 0, high: 0 };
  const random = seededRandom(seed);
  const means: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let sum = 0;
    for (let k = 0; k < n; k++) sum += diff[Math.floor(random() * n)]!;
    means.push(sum / n);
  }
  means.sort((x, y) => x - y);
  return { mean: mean(diff), low: means[Math.floor(0.025 * (rounds - 1))]!, high: means[Math.ceil(0.975 * (rounds - 1))]! };
}
