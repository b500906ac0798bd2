/**
 * Retrying a write transaction that SQLite refused with SQLITE_BUSY. With `BEGIN IMMEDIATE` in
 * WAL mode the write lock is taken before anything is written, so a busy refusal means nothing
 * was written and a retry cannot duplicate. SQLite's own busy handler is not fair: under heavy
 * contention from many processes one of them can sleep past `busy_timeout` while others keep
 * committing, so a few asynchronous, jittered retries back it up without blocking the event loop.
 */
import { isPalaceError, PalaceError, storeUnavailable } from '../../core/errors.js';

export const BUSY_RETRIES = 8;

export function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

export async function writeWithBusyRetry<T>(store: string, fn: () => T): Promise<T> {
  for (let attempt = 0;; attempt++) {
    try {
      return fn();
    } catch (e) {
      if (isBusy(e) && attempt < BUSY_RETRIES) {
        await new Promise((r) => setTimeout(r, 5 + Math.random() * 45));
        continue;
      }
      throw isPalaceError(e) ? e : writeFailure(store, e);
    }
  }
}

/**
 * A refused write as a PalaceError. A constraint violation (a UNIQUE index refusing a row) is a
 * conflict with what is stored, not an outage: retrying cannot help, so it must not say
 * "unavailable" and invite retries.
 */
function writeFailure(store: string, e: unknown): PalaceError {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT')) {
    return new PalaceError('conflict', `${store} refused the write: ${(e as Error).message}`, { store, rule: 'constraint', retryable: false, cause: e,
      details: { sqlite_code: code } });
  }
  return storeUnavailable(store, e);
}
