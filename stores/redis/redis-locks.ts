/**
 * Leases with fencing tokens on Redis for the cluster profile. Per key: a lease string
 * `<token>:<holder>` with a `PX` expiry; a token counter that never expires, so a released or
 * expired lease never lets a token be handed out twice; and the last lease handed out, kept
 * past its expiry until a release, so a holder whose renewals came late can take back a lease
 * nobody replaced (`reclaim`). Every operation is one function call, atomic on the server, and
 * expiry is Redis's own clock, the same for every process.
 */
import { checkLeaseToken, leaseArgs } from '../shared/lease-rules.js';
import type { LeaseInfo, Locks } from '../ports/locks.js';
import type { RedisConnections } from './connection.js';
import { REDIS_STORE, guardRedis, type RedisConnectionOptions } from './connection.js';
import { FunctionLibrary, connectWithLibrary } from './functions.js';
import { RedisLibraryStore } from './library-store.js';

// v2 added the last-lease key and `reclaim`; v1 processes in a mixed deploy keep their own library.
const VERSION = 'v2';
const ACQUIRE = `lock_acquire_${VERSION}`;
const RENEW = `lock_renew_${VERSION}`;
const RECLAIM = `lock_reclaim_${VERSION}`;
const RELEASE = `lock_release_${VERSION}`;
const HOLDER = `lock_holder_${VERSION}`;

// Keys: lease, token counter, last lease. A lease value is '<token>:<holder>'.
const library = new FunctionLibrary(`#!lua name=mempalace_locks_${VERSION}
redis.register_function('${ACQUIRE}', function(keys, args)
  if redis.call('EXISTS', keys[1]) == 1 then return false end
  local token = redis.call('INCR', keys[2])
  local value = token .. ':' .. args[1]
  redis.call('SET', keys[1], value, 'PX', args[2])
  redis.call('SET', keys[3], value)
  return token
end)

redis.register_function('${RENEW}', function(keys, args)
  if redis.call('GET', keys[1]) ~= args[1] then return 0 end
  redis.call('PEXPIRE', keys[1], args[2])
  return 1
end)

redis.register_function('${RECLAIM}', function(keys, args)
  local current = redis.call('GET', keys[1])
  if current == args[1] then
    redis.call('PEXPIRE', keys[1], args[2])
    return 1
  end
  if current or redis.call('GET', keys[3]) ~= args[1] then return 0 end
  redis.call('SET', keys[1], args[1], 'PX', args[2])
  return 1
end)

redis.register_function('${RELEASE}', function(keys, args)
  if redis.call('GET', keys[1]) ~= args[1] then return 0 end
  redis.call('DEL', keys[1], keys[3])
  return 1
end)

redis.register_function{function_name = '${HOLDER}', flags = {'no-writes'}, callback = function(keys)
  local value = redis.call('GET', keys[1])
  if not value then return false end
  local t = redis.call('TIME')
  return {value, redis.call('PTTL', keys[1]), t[1], t[2]}
end}
`);

export class RedisLocks extends RedisLibraryStore implements Locks {
  readonly storeName = REDIS_STORE;

  private constructor(connections: RedisConnections) {
    super(connections);
  }

  static async open(options: RedisConnectionOptions): Promise<RedisLocks> {
    return connectWithLibrary(options, library, (connections) => new RedisLocks(connections));
  }

  private keys(key: string): string[] {
    return [this.connections.key('lock', 'lease', key), this.connections.key('lock', 'token', key), this.connections.key('lock', 'last', key)];
  }

  private call(name: string, key: string, args: (string | number)[]): Promise<unknown> {
    return guardRedis(() => library.call(this.connections.command(), name, this.keys(key), args));
  }

  async acquire(key: string, holder: string, ttlMs: number): Promise<{ token: number } | null> {
    leaseArgs.acquire(key, holder, ttlMs);
    const token = (await this.call(ACQUIRE, key, [holder, ttlMs])) as number | null;
    return token === null ? null : { token: Number(token) };
  }

  async renew(key: string, holder: string, token: number, ttlMs: number): Promise<boolean> {
    leaseArgs.renew(key, holder, token, ttlMs);
    return (await this.call(RENEW, key, [`${token}:${holder}`, ttlMs])) === 1;
  }

  async reclaim(key: string, holder: string, token: number, ttlMs: number): Promise<boolean> {
    leaseArgs.reclaim(key, holder, token, ttlMs);
    return (await this.call(RECLAIM, key, [`${token}:${holder}`, ttlMs])) === 1;
  }

  async release(key: string, holder: string, token: number): Promise<boolean> {
    leaseArgs.release(key, holder, token);
    return (await this.call(RELEASE, key, [`${token}:${holder}`])) === 1;
  }

  async check(key: string, token: number): Promise<void> {
    return checkLeaseToken(key, token, (k) => this.holder(k));
  }

  async holder(key: string): Promise<LeaseInfo | null> {
    leaseArgs.key(key);
    const reply = (await this.call(HOLDER, key, [])) as [string, number, string, string] | null;
    if (reply === null) return null;
    const [value, pttl, seconds, micros] = reply;
    const colon = value.indexOf(':');
    if (pttl < 0) return null;
    // Expiry on the server's clock, the one every process's lease decisions use.
    const serverNowMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    return { holder: value.slice(colon + 1), token: Number(value.slice(0, colon)), expiresAtMs: serverNowMs + pttl };
  }
}

export function openRedisLocks(options: RedisConnectionOptions): Promise<RedisLocks> {
  return RedisLocks.open(options);
}
