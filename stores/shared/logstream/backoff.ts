/** The wait fallback of docs/logstream.md §5.4, shared by every adapter whose wake-ups can fail. */

/** docs/logstream.md §5.4 fallback: after the n-th empty check sleep min(1, 0.25 × 1.5^n) × (0.75 + 0.25 U) s. */
export function fallbackDelayMs(n: number): number {
  return Math.min(1, 0.25 * 1.5 ** n) * (0.75 + 0.25 * Math.random()) * 1000;
}
