/**
 * The locks port: leases with fencing tokens. Implemented by `embedded/` (SQLite) and `redis/`;
 * tests/contract/locks.contract.ts defines its meaning.
 */

/** The current lease of one key. */
export interface LeaseInfo {
  holder: string;
  token: number;
  /** Epoch milliseconds after which the lease is void. */
  expiresAtMs: number;
}

/**
 * Leases with fencing tokens. A key has at most one unexpired lease. Every successful `acquire`
 * of a key returns a token greater than any token ever handed out for that key (release and
 * expiry do not reset it), so a writer that lost its lease is recognised by its old token.
 * Acquiring a key that holds an unexpired lease fails, even for the same holder.
 */
export interface Locks {
  readonly storeName: string;
  acquire(key: string, holder: string, ttlMs: number): Promise<{ token: number } | null>;
  /** Extend the lease to now + ttlMs; false when this holder no longer holds this token unexpired. */
  renew(key: string, holder: string, token: number, ttlMs: number): Promise<boolean>;
  /**
   * `renew`, and also take back a lease of this holder and token that lapsed (expired, not
   * released) while no other token was handed out for the key: no other writer can have held it
   * meanwhile, so the token still fences out every writer but this one. False otherwise. For a
   * holder whose renewals were late (a stalled process) rather than a holder that was replaced.
   */
  reclaim(key: string, holder: string, token: number, ttlMs: number): Promise<boolean>;
  /** Give the lease up; false when this holder no longer held this token (nothing changes then). */
  release(key: string, holder: string, token: number): Promise<boolean>;
  /**
   * Throws a `stale_lease` PalaceError unless `token` is the token of the key's current,
   * unexpired lease. Writers guarded by a lease call this before each write.
   */
  check(key: string, token: number): Promise<void>;
  /** The current unexpired lease, or null. */
  holder(key: string): Promise<LeaseInfo | null>;
  close(): Promise<void>;
}
