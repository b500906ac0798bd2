/**
 * Connections to the cluster profile's Redis (`config.redis.url`), made in one place so every
 * Redis adapter fails and recovers the same way:
 *
 * - request connections give up on a command after a few reconnect attempts (a short, bounded
 *   wait while Redis is down) and time out hung commands, so callers get a retryable
 *   `store_unavailable` error naming redis instead of hanging;
 * - blocking connections (`XREAD BLOCK`) wait through outages (`maxRetriesPerRequest: null`) and
 *   resume by themselves;
 * - both reconnect forever with capped, jittered exponential backoff, so the adapter recovers
 *   without a process restart.
 *
 * Keys of one palace share its prefix (stores/shared/redis-address.ts).
 */
import { randomBytes } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import { PalaceError, isPalaceError, storeUnavailable } from '../../core/errors.js';
import { palacePrefix, redisServerOptions } from '../shared/redis-address.js';

export const REDIS_STORE = 'redis';

export interface RedisConnectionOptions {
  /** `redis://[user:password@]host:port[/db]`. */
  url: string;
  /** The palace whose keys this factory's users touch. */
  palaceName: string;
  /** Per-command limit on request connections (default 5 000 ms). */
  commandTimeoutMs?: number;
  /** TCP connect limit (default 3 000 ms). */
  connectTimeoutMs?: number;
  /** Reconnect attempts a queued command survives before it fails (default 2). */
  maxRetriesPerRequest?: number;
}

/** Reconnect delay: 50 ms doubling per attempt, capped at 1 s, plus up to 20 % jitter. */
export function reconnectDelayMs(attempt: number): number {
  const base = Math.min(1_000, 50 * 2 ** Math.min(attempt, 10));
  return Math.round(base * (1 + 0.2 * Math.random()));
}

/** Any failure of a Redis call as the caller sees it: PalaceErrors pass, the rest is retryable. */
export function redisFailure(e: unknown): PalaceError {
  if (isPalaceError(e)) return e;
  if (e instanceof Error && e.name === 'MaxRetriesPerRequestError') {
    return storeUnavailable(REDIS_STORE, new Error('no connection to the server after repeated reconnect attempts', { cause: e }));
  }
  return storeUnavailable(REDIS_STORE, e);
}

/** Run one Redis operation, turning engine and connection failures into `store_unavailable`. */
export async function guardRedis<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw redisFailure(e);
  }
}

export class RedisConnections {
  readonly prefix: string;
  private readonly base: RedisOptions;
  private readonly requestOptions: RedisOptions;
  private request: Redis | null = null;
  private lastError: string | null = null;
  private readonly blocking = new Set<Redis>();
  private closed = false;

  constructor(readonly options: RedisConnectionOptions) {
    this.prefix = palacePrefix(options.palaceName);
    this.base = {
      ...redisServerOptions(options.url),
      // RESP2 keeps reply shapes (XREAD, HGETALL) identical on every server version.
      protocol: 2,
      connectTimeout: options.connectTimeoutMs ?? 3_000,
      retryStrategy: reconnectDelayMs,
      enableReadyCheck: true,
    };
    this.requestOptions = {
      ...this.base,
      maxRetriesPerRequest: options.maxRetriesPerRequest ?? 2,
      commandTimeout: options.commandTimeoutMs ?? 5_000,
      // A write that was sent but not answered when the link dropped may or may not have run;
      // resending it could apply it twice, so it fails instead and the caller decides.
      autoResendUnfulfilledCommands: false,
    };
  }

  /** A new key under this palace's prefix. */
  key(...parts: string[]): string {
    return this.prefix + parts.join(':');
  }

  /** The shared connection for ordinary (non-blocking) commands. */
  command(): Redis {
    if (this.closed)
      throw new PalaceError('store_unavailable', 'redis is unavailable: the connection factory is closed', { store: REDIS_STORE, retryable: false });
    if (!this.request) {
      const conn = this.connect(this.requestOptions, 'request');
      conn.on('error', (e: Error) => (this.lastError = e.message));
      conn.on('ready', () => (this.lastError = null));
      this.request = conn;
    }
    // Known to be down: fail at once (nothing is sent) instead of queueing behind reconnects.
    if (this.request.status === 'reconnecting' || this.request.status === 'close') {
      throw storeUnavailable(REDIS_STORE,
        new Error(`not connected to ${this.base.host}:${this.base.port} (${this.lastError ?? 'connection lost'}); reconnecting`));
    }
    return this.request;
  }

  /**
   * A dedicated connection for blocking reads: it waits through outages and is closed with the
   * factory (or earlier by `release`).
   */
  blockingConnection(purpose: string): Redis {
    if (this.closed)
      throw new PalaceError('store_unavailable', 'redis is unavailable: the connection factory is closed', { store: REDIS_STORE, retryable: false });
    const conn = this.connect({ ...this.base, maxRetriesPerRequest: null, blockingTimeout: 10_000, autoResendUnfulfilledCommands: true }, purpose);
    this.blocking.add(conn);
    return conn;
  }

  release(conn: Redis): void {
    this.blocking.delete(conn);
    conn.disconnect();
  }

  /** Fail fast with a clear error when Redis cannot be reached at all. */
  async ping(): Promise<void> {
    await guardRedis(() => this.command().ping());
  }

  /**
   * Delete every key of this palace (SCAN over the prefix, then UNLINK). For removing a whole
   * palace from the cluster, and for tests that run under a throwaway palace name.
   */
  async dropPalace(): Promise<number> {
    return guardRedis(async () => {
      const conn = this.command();
      const pattern = `${this.prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`;
      let cursor = '0';
      let dropped = 0;
      do {
        const [next, keys] = await conn.scan(cursor, 'MATCH', pattern, 'COUNT', 1_000);
        cursor = next;
        if (keys.length > 0) dropped += await conn.unlink(...keys);
      } while (cursor !== '0');
      return dropped;
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.blocking, ...(this.request ? [this.request] : [])];
    this.blocking.clear();
    this.request = null;
    await Promise.allSettled(all.map(async (c) => {
      if (c.status === 'ready') await c.quit();
      else c.disconnect();
    }));
  }

  private connect(options: RedisOptions, purpose: string): Redis {
    const conn = new Redis({ ...options, connectionName: `mempalace-${purpose}-${randomBytes(3).toString('hex')}` });
    // Connection errors surface on the commands that needed the connection; without a listener
    // ioredis would also print each one as an unhandled 'error' event while it reconnects.
    conn.on('error', () => {});
    return conn;
  }
}
