/**
 * Wake-ups for waiters on an embedded logstream (docs/logstream.md §10.5). Two sources: this
 * adapter's own commits, and a poll of the connection's `PRAGMA data_version`, which changes
 * whenever another connection (another process, or another adapter in this one) commits. The
 * poll runs only while someone waits. If the poll fails, waiters fall back to the backoff
 * schedule of docs/logstream.md §5.4, so a wait never depends on process memory alone.
 */

import { nextWake, type Waiter, type WakeSubscription } from '../../shared/logstream/wait.js';

export const DATA_VERSION_POLL_MS = 250;

export class ChangeNotifier {
  private readonly waiters = new Set<Waiter>();
  private timer: NodeJS.Timeout | null = null;
  private lastVersion: number | null = null;
  private healthy = true;

  constructor(
    private readonly readVersion: () => number,
    private readonly pollMs = DATA_VERSION_POLL_MS,
  ) {}

  /** Register before the first check, so a commit between the check and the sleep is not missed. */
  subscribe(): WakeSubscription {
    const waiter: Waiter = { woken: false, wake: null };
    this.waiters.add(waiter);
    if (this.timer === null) this.start();
    return {
      next: (maxMs, attempt, signal) => nextWake(waiter, this.healthy, maxMs, attempt, signal),
      close: () => {
        this.waiters.delete(waiter);
        if (this.waiters.size === 0) this.stop();
      },
    };
  }

  /** Called by the adapter after each of its own commits. */
  notify(): void {
    for (const w of this.waiters) {
      w.woken = true;
      w.wake?.();
    }
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.lastVersion = null;
  }

  private start(): void {
    this.poll();
    this.timer = setInterval(() => this.poll(), this.pollMs);
    this.timer.unref();
  }

  private poll(): void {
    try {
      const version = this.readVersion();
      this.healthy = true;
      if (this.lastVersion !== null && version !== this.lastVersion) this.notify();
      this.lastVersion = version;
    } catch {
      this.healthy = false;
    }
  }
}
