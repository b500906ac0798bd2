/**
 * The last hour of this server's own latencies and errors, minute by minute, for the dashboard's
 * charts: searches (REST `/v1/search` and the `mempalace_search` tool), MCP tool calls, and HTTP
 * requests. Fed where /metrics records them (api/metrics.ts). Each minute keeps a count, an error
 * count and a log-scale latency histogram (buckets 20% apart), so memory stays fixed whatever the
 * traffic and p50/p95 are within one bucket of the exact value.
 */

export const HISTORY_SERIES = ['search', 'tools', 'http'] as const;
export type HistorySeries = (typeof HISTORY_SERIES)[number];

/** One minute of one series; percentiles are null in a minute without calls. */
export interface MinuteSummary {
  count: number;
  errors: number;
  p50_ms: number | null;
  p95_ms: number | null;
}

export type HistoryMinute = { at: string } & Record<HistorySeries, MinuteSummary>;

const MINUTE_MS = 60_000;
/** Bucket i holds latencies in [LOWEST_MS·GROWTH^(i-1), LOWEST_MS·GROWTH^i); bucket 0 everything below LOWEST_MS. */
const LOWEST_MS = 0.1;
const GROWTH = 1.2;
const BUCKETS = 90;

interface SeriesMinute {
  count: number;
  errors: number;
  histogram: Uint32Array;
}

function bucketOf(ms: number): number {
  if (!(ms >= LOWEST_MS)) return 0;
  return Math.min(BUCKETS - 1, 1 + Math.floor(Math.log(ms / LOWEST_MS) / Math.log(GROWTH)));
}

/** The geometric middle of a bucket, two significant digits. */
function bucketValue(i: number): number {
  const ms = i === 0 ? LOWEST_MS / 2 : LOWEST_MS * GROWTH ** (i - 0.5);
  return Number(ms.toPrecision(2));
}

function percentile(m: SeriesMinute, q: number): number | null {
  if (m.count === 0) return null;
  const rank = Math.max(1, Math.ceil(q * m.count));
  let seen = 0;
  for (let i = 0; i < BUCKETS; i++) {
    seen += m.histogram[i] ?? 0;
    if (seen >= rank) return bucketValue(i);
  }
  return bucketValue(BUCKETS - 1);
}

function summary(m: SeriesMinute | undefined): MinuteSummary {
  if (!m) return { count: 0, errors: 0, p50_ms: null, p95_ms: null };
  return { count: m.count, errors: m.errors, p50_ms: percentile(m, 0.5), p95_ms: percentile(m, 0.95) };
}

export class MetricsHistory {
  /** Minute number since the epoch → that minute's series. */
  private readonly minutes = new Map<number, Partial<Record<HistorySeries, SeriesMinute>>>();

  constructor(private readonly keepMinutes = 60, private readonly now: () => number = Date.now) {}

  record(series: HistorySeries, seconds: number, failed: boolean): void {
    const minute = Math.floor(this.now() / MINUTE_MS);
    let entry = this.minutes.get(minute);
    if (!entry) {
      entry = {};
      this.minutes.set(minute, entry);
      this.prune(minute);
    }
    const m = entry[series] ??= { count: 0, errors: 0, histogram: new Uint32Array(BUCKETS) };
    m.count += 1;
    if (failed) m.errors += 1;
    const bucket = bucketOf(seconds * 1000);
    m.histogram[bucket] = (m.histogram[bucket] ?? 0) + 1;
  }

  /** The last `keepMinutes` minutes, oldest first, the current one included; a minute without calls is there with zero counts. */
  snapshot(): HistoryMinute[] {
    const current = Math.floor(this.now() / MINUTE_MS);
    this.prune(current);
    const out: HistoryMinute[] = [];
    for (let minute = current - this.keepMinutes + 1; minute <= current; minute++) {
      const entry = this.minutes.get(minute);
      out.push({ at: new Date(minute * MINUTE_MS).toISOString(), search: summary(entry?.search), tools: summary(entry?.tools), http: summary(entry?.http) });
    }
    return out;
  }

  private prune(current: number): void {
    for (const minute of this.minutes.keys()) if (minute <= current - this.keepMinutes) this.minutes.delete(minute);
  }
}
