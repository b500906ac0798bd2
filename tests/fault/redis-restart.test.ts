/**
 * Redis killed with SIGKILL while events are appended, then restarted on the same data directory
 * (AOF on, `appendfsync everysec`, the settings deploy/local uses). Every acknowledged event must
 * still be there, in strictly increasing `seq`; appends during the outage fail with a retryable
 * error naming redis; the same adapter instance (and its waits) work again after the restart.
 *
 * The test runs its own redis-server on a free port and a temporary data directory instead of
 * killing the shared stack's Redis on 6379 (deploy/local keeps one data dir per engine, so a
 * second instance cannot use those scripts), which other test files may be using at the time.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PalaceError } from '../../core/errors.js';
import type { StoredEvent } from '../../stores/ports/logstream/records.js';
import { eventDraft } from '../helpers/events.js';
import { freePort, stopChild } from '../helpers/processes.js';
import { openRedisLogstream, type RedisLogstream } from '../../stores/redis/logstream/redis-logstream.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class PrivateRedis {
  private child: ChildProcess | null = null;
  constructor(readonly port: number, readonly dir: string) {}

  async start(): Promise<void> {
    this.child = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(this.port), '--protected-mode', 'yes', '--dir', this.dir, '--appendonly', 'yes',
      '--appendfsync', 'everysec', '--save', '', '--daemonize', 'no', '--logfile', path.join(this.dir, 'redis.log')], { stdio: 'ignore' });
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      const ping = spawnSync('redis-cli', ['-p', String(this.port), 'ping'], { encoding: 'utf8' });
      if (ping.stdout.trim() === 'PONG') return;
      await sleep(100);
    }
    throw new Error(`redis-server on ${this.port} did not answer PING within 15 s`);
  }

  /** SIGKILL, and wait until the process is gone. */
  async kill9(): Promise<void> {
    await stopChild(this.child, 'SIGKILL');
    this.child = null;
  }

  async stop(): Promise<void> {
    await stopChild(this.child, 'SIGTERM');
  }
}

const draft = (body: string) => eventDraft({ type: 'fault.append', stream: 'project/fault', room: 'status', from_agent: 'writer', to_agent: 'reader', body });

describe('Redis logstream across a kill -9 of Redis', () => {
  let redis: PrivateRedis;
  let dir: string;
  let logstream: RedisLogstream;
  let other: RedisLogstream | undefined;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mp-redis-fault-'));
    redis = new PrivateRedis(await freePort(), dir);
    await redis.start();
  });
  afterAll(async () => {
    await logstream?.close();
    await other?.close();
    await redis?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every acknowledged event, fails outage appends as retryable redis errors, recovers in place', async () => {
    const options = { url: `redis://127.0.0.1:${redis.port}`, palaceName: 'fault' };
    logstream = await openRedisLogstream(options);
    const acknowledged: StoredEvent[] = [];
    const outageErrors: PalaceError[] = [];
    let phase: 'before' | 'outage' | 'after' = 'before';
    let ackedAfterRestart = 0;
    let stop = false;

    // Two concurrent writers, so appends are in flight at the moment of the kill.
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        try {
          const e = await logstream.append(draft(`w${w}-${i}`));
          acknowledged.push(e);
          if (phase === 'after') ackedAfterRestart++;
        } catch (e) {
          if (!(e instanceof PalaceError)) throw e;
          if (phase === 'before') throw e;
          outageErrors.push(e);
          await sleep(20);
        }
      }
    };
    const writers = [writer(0), writer(1)];

    while (acknowledged.length < 500) await sleep(10);
    phase = 'outage';
    await redis.kill9();
    const ackedAtKill = acknowledged.length;
    await sleep(1_500);
    expect(outageErrors.length).toBeGreaterThan(0);
    await redis.start();
    phase = 'after';
    const restartDeadline = Date.now() + 30_000;
    while (ackedAfterRestart < 200 && Date.now() < restartDeadline) await sleep(20);
    stop = true;
    await Promise.all(writers);

    expect(ackedAtKill).toBeGreaterThanOrEqual(500);
    expect(ackedAfterRestart).toBeGreaterThanOrEqual(200);
    for (const e of outageErrors) {
      expect(e.code).toBe('store_unavailable');
      expect(e.store).toBe('redis');
      expect(e.retryable).toBe(true);
      expect(e.message).toMatch(/^redis is unavailable: /);
      // A write that may have reached Redis names the id it was given, so a retry can check.
      if (e.details?.event_id !== undefined) expect(e.details.event_id).toMatch(/^evt_\d{8}T\d{6}_[0-9a-f]{12}$/);
    }

    // Read everything back through the same adapter, paging by cursor.
    const stored: StoredEvent[] = [];
    let afterSeq: number | undefined;
    for (;;) {
      const page = await logstream.list({ order: 'asc', limit: 500, ...(afterSeq === undefined ? {} : { afterSeq }) });
      if (page.length === 0) break;
      stored.push(...page);
      afterSeq = page.at(-1)!.seq;
    }
    for (let i = 1; i < stored.length; i++) expect(stored[i]!.seq).toBeGreaterThan(stored[i - 1]!.seq);
    const byId = new Map(stored.map((e) => [e.id, e]));
    const missing = acknowledged.filter((e) => !byId.has(e.id));
    expect(missing).toEqual([]);
    for (const e of acknowledged) expect(byId.get(e.id)).toEqual(e);
    // An append whose reply was lost in the kill may be stored without an acknowledgement; an
    // outage error names its id so a caller can check. Nothing else may appear.
    const unacknowledged = stored.filter((e) => !acknowledged.some((a) => a.id === e.id));
    const namedIds = new Set(outageErrors.map((e) => e.details?.event_id));
    for (const e of unacknowledged) expect(namedIds.has(e.id)).toBe(true);

    // Waits on the same adapter work again: another process's append wakes this one's tailer.
    other = await openRedisLogstream(options);
    const last = stored.at(-1)!;
    const waiting = logstream.waitForEvents({ afterSeq: last.seq, correlation_id: 'after-restart', limit: 10 }, 10_000);
    await sleep(200);
    const started = Date.now();
    const woke = await other.append({ ...draft('wake'), correlation_id: 'after-restart' });
    expect((await waiting).map((e) => e.id)).toEqual([woke.id]);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('durable mode on Redis 7.0 (no WAITAOF) requires appendfsync always, and notices when it is turned off', async () => {
    const options = { url: `redis://127.0.0.1:${redis.port}`, palaceName: 'durable', durable: true };
    const cli = (...args: string[]) => spawnSync('redis-cli', ['-p', String(redis.port), ...args], { encoding: 'utf8' }).stdout.trim();
    expect(cli('CONFIG', 'SET', 'appendfsync', 'everysec')).toBe('OK');
    const refused = await openRedisLogstream(options).then(() => null, (e: unknown) => e);
    expect(refused).toBeInstanceOf(PalaceError);
    expect(refused).toMatchObject({ code: 'store_unavailable', store: 'redis', retryable: false, rule: 'durable_fsync' });
    expect((refused as PalaceError).message).toContain('appendfsync is everysec');

    expect(cli('CONFIG', 'SET', 'appendfsync', 'always')).toBe('OK');
    const durable = await openRedisLogstream(options);
    try {
      const e = await durable.append(draft('durable'));
      expect(await durable.getEvent(e.id)).toEqual(e);
      expect(cli('CONFIG', 'SET', 'appendfsync', 'everysec')).toBe('OK');
      // The setting is re-confirmed at least every 5 s before a durable write.
      await sleep(5_200);
      await expect(durable.append(draft('not durable'))).rejects.toMatchObject({ code: 'store_unavailable', rule: 'durable_fsync' });
    } finally {
      await durable.close();
    }
  });
});
