/**
 * The embedded profile's refresh scheduler: the trigger queue's debounce, in-process. A request
 * starts (or restarts) a quiet period per source; when it passes, the refresh runs to its end.
 * Requests while it runs are remembered as one, which runs after it, again after a quiet period —
 * the same outcome as the BullMQ deduplication (`reschedule`, `keepLastIfActive`) of the cluster.
 * No refresh waits longer than `maxWaitMs` after the first request it has not yet served, however
 * many requests keep restarting the quiet period.
 *
 * Webhook deliveries it has claimed are remembered in this process for their window (at most
 * MAX_DELIVERIES at once; a restart of `serve` forgets them).
 */
import type { Logger } from '../../../core/log.js';
import type { RefreshScheduler } from '../../../stores/ports/refresh-scheduler.js';
import type { RegisteredSource } from '../../../stores/ports/registered-sources.js';

interface PerSource {
  timer?: NodeJS.Timeout;
  running?: Promise<void>;
  /** A request arrived while the refresh ran. */
  again: boolean;
  /** When the first request not yet served arrived. */
  firstAt?: number;
  requests: number;
}

/** Delivery keys remembered at once; past it the oldest are forgotten first. */
const MAX_DELIVERIES = 100_000;

export class RefreshDebouncer implements RefreshScheduler {
  private readonly sources = new Map<string, PerSource>();
  /** Claimed delivery key → when it may be accepted again (insertion order = age). */
  private readonly deliveries = new Map<string, number>();
  private closed = false;

  constructor(
    private readonly run: (sourceId: string) => Promise<unknown>,
    private readonly debounceMs: number,
    private readonly log: Logger,
    private readonly maxWaitMs = Number.POSITIVE_INFINITY,
  ) {}

  async request(source: RegisteredSource): Promise<{ request_id: string }> {
    const id = source.source_id;
    const s = this.sources.get(id) ?? { again: false, requests: 0 };
    this.sources.set(id, s);
    s.requests += 1;
    s.firstAt ??= Date.now();
    if (s.running) s.again = true;
    else this.arm(id, s);
    return { request_id: `refresh-${id}` };
  }

  async claimDelivery(keys: readonly string[], windowMs: number): Promise<boolean> {
    const now = Date.now();
    for (const [key, until] of this.deliveries) {
      if (until > now && this.deliveries.size <= MAX_DELIVERIES) break;
      this.deliveries.delete(key);
    }
    if (keys.some((k) => (this.deliveries.get(k) ?? 0) > now)) return false;
    for (const k of keys) this.deliveries.set(k, now + windowMs);
    return true;
  }

  async releaseDelivery(keys: readonly string[]): Promise<void> {
    for (const k of keys) this.deliveries.delete(k);
  }

  private arm(id: string, s: PerSource): void {
    if (this.closed) return;
    clearTimeout(s.timer);
    const left = (s.firstAt ?? Date.now()) + this.maxWaitMs - Date.now();
    s.timer = setTimeout(() => this.fire(id, s), Math.max(0, Math.min(this.debounceMs, left)));
  }

  private fire(id: string, s: PerSource): void {
    s.timer = undefined;
    s.again = false;
    s.firstAt = undefined;
    s.running = this.run(id)
      .then(() => undefined, (e: unknown) => this.log.error({ err: e }, `mempalace: refresh of ${id} failed`))
      .finally(() => {
        s.running = undefined;
        if (s.again) this.arm(id, s);
        else if (!s.timer) this.sources.delete(id);
      });
  }

  /** Refreshes waiting for their quiet period are dropped; running ones are waited for. */
  async close(): Promise<void> {
    this.closed = true;
    for (const s of this.sources.values()) clearTimeout(s.timer);
    await Promise.all([...this.sources.values()].map((s) => s.running));
  }
}
