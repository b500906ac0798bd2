/**
 * What an acknowledged logstream write means on Redis (docs/decisions.md Q4): an append is acknowledged
 * once Redis executed it; with `appendonly yes` Redis writes the command to the AOF before
 * replying, so a killed Redis process loses no acknowledged event (an OS crash can lose up to the
 * last `everysec` second). The opt-in durable mode must know the write reached the disk: on
 * Redis ≥ 7.2 it waits with `WAITAOF 1 0`; older servers have no such wait, so durable mode there
 * requires `appendfsync always` (every reply follows its fsync) and refuses to open otherwise.
 */
import { PalaceError, isPalaceError } from '../../../core/errors.js';
import { REDIS_STORE, redisFailure, type RedisConnections } from '../connection.js';
import { infoField, parseVersion } from './server-checks.js';

export interface DurabilityOptions {
  /** Wait for the AOF fsync before acknowledging (MEMPALACE_LOGSTREAM_DURABLE). */
  durable?: boolean;
  /** Longest durable wait before the append is reported as a retryable error (default 2 000 ms). */
  durableTimeoutMs?: number;
}

/** A failed write names the id it tried, so a caller can look for it before retrying. */
export function writeFailure(e: unknown, eventId: string): PalaceError {
  // PalaceErrors were raised before anything was sent (or are not about the connection).
  if (isPalaceError(e)) return e;
  const failure = redisFailure(e);
  return new PalaceError('store_unavailable', `${failure.message} (the write may or may not have been applied; event id ${eventId})`, {
    store: REDIS_STORE,
    retryable: true,
    cause: e,
    details: { event_id: eventId },
  });
}

function durableRefusal(reason: string): PalaceError {
  return new PalaceError('store_unavailable',
    `redis cannot confirm durable appends: ${reason}. MEMPALACE_LOGSTREAM_DURABLE=1 needs Redis ≥ 7.2 (WAITAOF) or, on older servers, appendonly yes with appendfsync always`,
    {
      store: REDIS_STORE,
      retryable: false,
      rule: 'durable_fsync',
    });
}

/** The durable mode's checks around each write; without `durable` both are no-ops. */
export class DurabilityPolicy {
  private checkedAt = 0;
  private hasWaitAof = false;

  constructor(
    private readonly connections: RedisConnections,
    private readonly options: DurabilityOptions,
  ) {}

  /**
   * Before each write (and, forced, at open): on servers without WAITAOF, re-confirm every few
   * seconds that `appendfsync always` is still in force (an operator may have changed it at run
   * time).
   */
  async confirm(force = false): Promise<void> {
    if (!this.options.durable) return;
    if (this.hasWaitAof || (!force && Date.now() - this.checkedAt < 5_000)) return;
    const conn = this.connections.command();
    const version = parseVersion(await infoField(conn, 'server', 'redis_version'));
    if (version >= 7_002_000) {
      this.hasWaitAof = true;
      return;
    }
    let fsync: string | undefined;
    try {
      fsync = ((await conn.call('CONFIG', 'GET', 'appendfsync')) as string[])[1];
    } catch (e) {
      throw durableRefusal(`CONFIG GET appendfsync failed (${(e as Error).message})`);
    }
    if (fsync !== 'always') throw durableRefusal(`appendfsync is ${fsync ?? 'unknown'}`);
    this.checkedAt = Date.now();
  }

  /** After a write: WAITAOF where the server has it (Redis ≥ 7.2). */
  async afterWrite(id: string): Promise<void> {
    if (!this.options.durable || !this.hasWaitAof) return;
    const timeout = this.options.durableTimeoutMs ?? 2_000;
    let synced: number;
    try {
      synced = ((await this.connections.command().call('WAITAOF', '1', '0', String(timeout))) as number[])[0] ?? 0;
    } catch (e) {
      throw writeFailure(e, id);
    }
    if (synced < 1) {
      throw new PalaceError('store_unavailable',
        `redis is unavailable: ${id} was stored but its AOF fsync was not confirmed within ${timeout} ms; check for ${id} before retrying`, {
        store: REDIS_STORE,
        retryable: true,
        details: { event_id: id, rule: 'durable_fsync' },
      });
    }
  }
}
