/**
 * The wait of `Logstream.waitForEvents`, the same in every adapter: the adapter's wake-up source
 * (SQLite's change notifier, Redis's `XREAD BLOCK` tailer) only says "look again"; the store
 * stays the source of truth, so the query is re-run on every wake-up.
 */
import type { StoredEvent } from '../../ports/logstream/records.js';

export interface WakeSubscription {
  /**
   * Resolves on the next wake-up (immediately if one happened since the previous call), after
   * `maxMs`, or when `signal` aborts. `attempt` picks the fallback delay when unhealthy.
   */
  next(maxMs: number, attempt: number, signal?: AbortSignal): Promise<void>;
  close(): void;
}

/**
 * Runs `read` until it finds events, `deadline` (epoch ms) passes or `signal` aborts, waiting on
 * `subscription` between reads; closes the subscription whatever happens.
 */
export async function waitForMatches(deadline: number, subscription: WakeSubscription, read: () => StoredEvent[] | Promise<StoredEvent[]>,
  signal?: AbortSignal): Promise<StoredEvent[]> {
  try {
    for (let attempt = 0;; attempt++) {
      const events = await read();
      const remaining = deadline - Date.now();
      if (events.length > 0 || remaining <= 0 || signal?.aborted) return events;
      await subscription.next(remaining, attempt, signal);
    }
  } finally {
    subscription.close();
  }
}
