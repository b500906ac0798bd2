/**
 * The embedded profile's refresh scheduler: the trigger queue's debounce, in-process. A request
 * starts (or restarts) a quiet period per source; when it passes, the refresh runs to its end.
 * Requests while it runs are remembered as one, which runs after it, again after a quiet period —
 * the same outcome as the BullMQ deduplication (`reschedule`, `keepLastIfActive`) of the cluster.
 */
import type { Logger } from '../../core/log.js';
import type { RefreshScheduler } from '../../palace/registered-sources.js';
import type { RegisteredSource } from '../../stores/ports/job-store.js';

interface PerSource {
  timer?: NodeJS.Timeout;
  running?: Promise<void>;
  /** A request arrived while the refresh ran. */
  again: boolean;
  requests: number;
}

export class RefreshDebouncer implements RefreshScheduler {
  private readonly sources = new Map<string, PerSource>();
  private closed = false;

  constructor(
    private readonly run: (sourceId: string) => Promise<unknown>,
    private readonly debounceMs: number,
    private readonly log: Logger,
  ) {}

  async request(source: RegisteredSource): Promise<{ request_id: string }> {
    const id = source.source_id;
    const s = this.sources.get(id) ?? { again: false, requests: 0 };
    this.sources.set(id, s);
    s.requests += 1;
    if (s.running) s.again = true;
    else this.arm(id, s);
    return { request_id: `refresh-${id}` };
  }

  private arm(id: string, s: PerSource): void {
    if (this.closed) return;
    clearTimeout(s.timer);
    s.timer = setTimeout(() => this.fire(id, s), this.debounceMs);
  }

  private fire(id: string, s: PerSource): void {
    s.timer = undefined;
    s.again = false;
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
