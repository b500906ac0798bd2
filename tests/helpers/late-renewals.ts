/**
 * Fault injection for leases: real locks whose renewals and take-backs wait while `paused` is
 * set, as a stalled process's would, so a lease shorter than the pause lapses with nobody else
 * wanting it. Counts what the holder saw; everything else passes straight to the real store.
 */
import type { LeaseInfo, Locks } from '../../stores/ports/locks.js';

export class LateRenewals implements Locks {
  readonly storeName: string;
  paused: Promise<void> | undefined;
  readonly tokens = new Set<number>();
  /** Take-backs asked for while no lease was held: lapses the holder noticed, and how many it won. */
  lapsesSeen = 0;
  takenBack = 0;
  pauses = 0;

  constructor(private readonly inner: Locks) {
    this.storeName = inner.storeName;
  }

  /** Pause renewals for `ms`, then let the waiting ones through. */
  async pause(ms: number): Promise<void> {
    let resume!: () => void;
    this.paused = new Promise((r) => (resume = r));
    await new Promise((r) => setTimeout(r, ms));
    this.paused = undefined;
    resume();
    this.pauses++;
  }

  async acquire(key: string, holder: string, ttlMs: number): Promise<{ token: number } | null> {
    const lease = await this.inner.acquire(key, holder, ttlMs);
    if (lease) this.tokens.add(lease.token);
    return lease;
  }

  async renew(key: string, holder: string, token: number, ttlMs: number): Promise<boolean> {
    await this.paused;
    return this.inner.renew(key, holder, token, ttlMs);
  }

  async reclaim(key: string, holder: string, token: number, ttlMs: number): Promise<boolean> {
    await this.paused;
    const before = await this.inner.holder(key);
    const held = await this.inner.reclaim(key, holder, token, ttlMs);
    if (before === null) {
      this.lapsesSeen++;
      if (held) this.takenBack++;
    }
    return held;
  }

  release(key: string, holder: string, token: number): Promise<boolean> {
    return this.inner.release(key, holder, token);
  }

  check(key: string, token: number): Promise<void> {
    return this.inner.check(key, token);
  }

  holder(key: string): Promise<LeaseInfo | null> {
    return this.inner.holder(key);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
