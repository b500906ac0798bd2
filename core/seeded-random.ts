/**
 * Reproducible pseudo-random numbers in [0, 1) from a 32-bit seed (mulberry32): for resampling
 * in reports and for synthetic data, where the same seed must give the same figures. Not for
 * anything secret.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
