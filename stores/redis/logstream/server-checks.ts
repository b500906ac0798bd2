/** What the logstream requires of the Redis server it runs on, read from `INFO`. */
import type { Redis } from 'ioredis';
import { PalaceError } from '../../../core/errors.js';
import { REDIS_STORE } from '../connection.js';

/** `major.minor.patch` as one comparable number (7.2.4 → 7 002 004). */
export function parseVersion(text: string | undefined): number {
  const [major = 0, minor = 0, patch = 0] = (text ?? '').split('.').map((p) => Number.parseInt(p, 10) || 0);
  return major * 1_000_000 + minor * 1_000 + patch;
}

export async function infoField(conn: Redis, section: string, field: string): Promise<string | undefined> {
  const info = await conn.info(section);
  return new RegExp(`^${field}:(.*)$`, 'm').exec(info)?.[1]?.trim();
}

/**
 * The operating requirements of docs/logstream.md §11.10–11.12 that make "nothing trimmed silently" and the AOF
 * durability promise true: AOF on, `noeviction`, and Functions (Redis ≥ 7.0).
 */
export async function checkServer(conn: Redis): Promise<void> {
  const version = await infoField(conn, 'server', 'redis_version');
  if (parseVersion(version) < 7_000_000) {
    throw new PalaceError('store_unavailable', `redis ${version ?? '?'} is too old for the logstream: Redis Functions need 7.0 or later`, { store: REDIS_STORE,
      retryable: false, rule: 'redis_version' });
  }
  const aof = await infoField(conn, 'persistence', 'aof_enabled');
  if (aof !== '1') {
    throw new PalaceError('store_unavailable',
      'redis runs without AOF (appendonly no); the logstream requires appendonly yes so acknowledged events survive a restart', { store: REDIS_STORE,
      retryable: false, rule: 'redis_appendonly' });
  }
  const policy = await infoField(conn, 'memory', 'maxmemory_policy');
  if (policy !== 'noeviction') {
    throw new PalaceError('store_unavailable',
      `redis maxmemory-policy is ${policy ?? 'unknown'}; the logstream requires noeviction, since any eviction could drop events silently`, {
      store: REDIS_STORE,
      retryable: false,
      rule: 'redis_noeviction',
    });
  }
}
