/**
 * The exact-scan bound both drawer adapters share: a knn whose filter matches at most this many
 * rows is answered by an exact scan of them, so below it both profiles are exact and return the
 * same rows (tests/integration/search-parity.test.ts). The embedded adapter may scan exactly
 * beyond it too, where that is cheaper than a filtered graph walk.
 */
const EXACT_SCAN_MAX = 4000;
const EXACT_SCAN_PER_K = 50;

/** Rows a filter may match for a knn of `k` to be answered exactly in every profile. */
export function exactScanBound(k: number): number {
  return Math.max(EXACT_SCAN_MAX, k * EXACT_SCAN_PER_K);
}
