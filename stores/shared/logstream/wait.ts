/**
 * The wait of `Logstream.waitForEvents`, the same in every adapter: the adapter's wake-up source
 * (SQLite's change notifier, Redis's `XREAD BLOCK` tailer) only says "look again"; the store
 * stays the source of truth, so the query is re-run on every wake-up.
 */
import type { StoredEvent } from '../../ports/logstream/records.js';
import { fallbackDelayMs } from './backoff.js';

export interface WakeSubscription {
  /**
   * Resolves on the next wake-up (immediately if one happened since the previous call), after
   * `maxMs`, or when `signal` aborts. `attempt` picks the fallback delay when unhealthy.
   */
  next(maxMs: number, attempt: number, signal?: AbortSignal): Promise<void>;
  close(): void;
}

/** One subscriber's wake-up state: `woken` since its last wait, and how to end the wait it is in. */
export interface Waiter {
  woken: boolean;
  wake: (() => void) | null;
}

/**
 * `WakeSubscription.next` over a waiter: at once if it was woken meanwhile, else on the next wake,
 * after `maxMs` (the fallback delay when the wake-up source is unhealthy) or on abort.
 */
export function nextWake(waiter: Waiter, healthy: boolean, maxMs: number, attempt: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (waiter.woken || signal?.aborted) {
      waiter.woken = false;
      resolve();
      return;
    }
    const delay = healthy ? maxMs : Math.min(maxMs, fallbackDelayMs(attempt));
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      waiter.wake = null;
      waiter.woken = false;
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, delay));
    signal?.addEventListener('abort', done, { once: true });
    waiter.wake = done;
  });
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
