/**
 * What every `Locks` adapter checks the same way: the argument rules of its operations and the
 * `stale_lease` refusal of `check`. Each adapter keeps its own storage and expiry clock.
 */
import { PalaceError, invalidArgument } from '../../core/errors.js';
import type { LeaseInfo } from '../ports/locks.js';

function requireText(field: string, value: unknown): void {
  if (typeof value !== 'string' || value === '') throw invalidArgument(field, 'non_empty_string', `${field} must be a non-empty string`);
}

function requirePositiveInt(field: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
    throw invalidArgument(field, 'positive_integer', `${field} must be a positive integer`);
}

/** Argument checks of the `Locks` operations, in the order the fields are named in the error. */
export const leaseArgs = {
  key(key: string): void {
    requireText('key', key);
  },
  acquire(key: string, holder: string, ttlMs: number): void {
    requireText('key', key);
    requireText('holder', holder);
    requirePositiveInt('ttl_ms', ttlMs);
  },
  renew(key: string, holder: string, token: number, ttlMs: number): void {
    requireText('key', key);
    requireText('holder', holder);
    requirePositiveInt('token', token);
    requirePositiveInt('ttl_ms', ttlMs);
  },
  reclaim(key: string, holder: string, token: number, ttlMs: number): void {
    leaseArgs.renew(key, holder, token, ttlMs);
  },
  release(key: string, holder: string, token: number): void {
    requireText('key', key);
    requireText('holder', holder);
    requirePositiveInt('token', token);
  },
};

/**
 * `Locks.check`: resolves when `token` is the token of the key's current, unexpired lease as
 * `currentHolder` reports it, else throws `stale_lease`.
 */
export async function checkLeaseToken(key: string, token: number, currentHolder: (key: string) => Promise<LeaseInfo | null>): Promise<void> {
  requireText('key', key);
  requirePositiveInt('token', token);
  const current = await currentHolder(key);
  if (current?.token !== token) {
    throw new PalaceError('stale_lease', `lease token ${token} for ${key} is stale${current ? ` (current token ${current.token})` : ' (no lease is held)'}`, {
      details: { key, token, current_token: current?.token ?? null },
    });
  }
}
