/**
 * Small helpers shared by the benchmarks: order statistics, timing, peak memory and a one-line
 * description of the machine for the report.
 */
import os from 'node:os';

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Nearest-rank percentile, `p` in [0, 1]. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

/** `median …, p95 …, max …` of latencies in milliseconds, for a table cell. */
export function latencySummary(ms: readonly number[]): string {
  return `median ${median(ms).toFixed(1)} ms, p95 ${percentile(ms, 0.95).toFixed(1)} ms, max ${Math.max(...ms).toFixed(1)} ms`;
}

/** Milliseconds one call of `fn` takes. */
export async function timeMs(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

/** Operations per second for `count` operations begun at `startedMs` (a `performance.now()` reading). */
export function ratePerSecond(count: number, startedMs: number): number {
  return count / ((performance.now() - startedMs) / 1000);
}

/** Peak resident set size of this process so far, in MiB. */
export function peakRssMb(): number {
  return process.resourceUsage().maxRSS / 1024;
}

export function machine(): string {
  const cpu = os.cpus()[0]?.model.trim() ?? 'unknown CPU';
  return `${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores (${cpu}), ${
    Math.round(os.totalmem() / 2 ** 30)
  } GiB, Node ${process.version}, ${os.type()} ${os.release()}`;
}

/** Deterministic pseudo-random numbers in [0, 1). */
export { seededRandom as seeded } from '../../core/seeded-random.js';
