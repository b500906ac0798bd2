/**
 * The per-process tailer of docs/logstream.md §11.6: one blocking connection runs `XREAD BLOCK` on
 * the log and wakes the waiters whose predicate matches a new entry. The store stays the only
 * source of truth: a woken waiter re-runs its query, and an append by any process reaches every
 * tailer through Redis, never through this process's memory.
 *
 * The tailer runs while someone waits and lingers briefly after the last one leaves. While its
 * connection is down, waiters poll with the docs/logstream.md §5.4 schedule; when it comes back every waiter is
 * woken once, so nothing appended in between is missed.
 */
import type { Redis } from 'ioredis';
import type { StoredEvent } from '../../ports/logstream/records.js';
import { nextWake, type Waiter, type WakeSubscription } from '../../shared/logstream/wait.js';
import type { RedisConnections } from '../connection.js';
import type { StreamEntry } from './codec.js';

const BLOCK_MS = 5_000;
const READ_COUNT = 1_000;
const LINGER_MS = 10_000;

type XReadReply = [key: string, entries: StreamEntry[]][] | null;

interface Subscriber extends Waiter {
  matches: (event: StoredEvent) => boolean;
}

export class LogTailer {
  private conn: Redis | null = null;
  private lastId: string | null = null;
  private starting: Promise<void> | null = null;
  private loopRunning = false;
  private lingerTimer: NodeJS.Timeout | null = null;
  private readonly subscribers = new Set<Subscriber>();
  private closed = false;

  constructor(
    private readonly connections: RedisConnections,
    private readonly logKey: string,
    private readonly seqKey: string,
    private readonly parse: (id: string, fields: string[]) => StoredEvent,
  ) {}

  /** Whether waits can rely on notifications right now. */
  get healthy(): boolean {
    return this.conn?.status === 'ready' && this.lastId !== null;
  }

  /**
   * Register before the waiter's first query: once this resolves, every entry committed after
   * that query is delivered (or the waiter polls, while the tailer is unhealthy).
   */
  async subscribe(matches: (event: StoredEvent) => boolean): Promise<WakeSubscription> {
    const sub: Subscriber = { matches, woken: false, wake: null };
    this.subscribers.add(sub);
    if (this.lingerTimer) {
      clearTimeout(this.lingerTimer);
      this.lingerTimer = null;
    }
    await this.start();
    return {
      next: (maxMs, attempt, signal) => nextWake(sub, this.healthy, maxMs, attempt, signal),
      close: () => {
        this.subscribers.delete(sub);
        if (this.subscribers.size === 0 && !this.closed) {
          this.lingerTimer = setTimeout(() => this.stop(), LINGER_MS);
          this.lingerTimer.unref();
        }
      },
    };
  }

  close(): void {
    this.closed = true;
    this.stop();
    this.wakeAll(() => true);
  }

  private async start(): Promise<void> {
    if (this.closed) return;
    if (!this.conn) {
      const conn = this.connections.blockingConnection('logstream-tailer');
      this.conn = conn;
      // A reconnect may have missed nothing (the read resumes from the last id), but waiters
      // that polled meanwhile switch back to notifications: wake them to re-check once.
      conn.on('ready', () => this.wakeAll(() => true));
      conn.on('close', () => this.wakeAll(() => true));
    }
    if (this.lastId === null) {
      this.starting ??= this.initialise().finally(() => (this.starting = null));
      await this.starting;
    }
    if (!this.loopRunning) void this.loop();
  }

  /** The resume point is the last committed `seq` at the time the tailer starts. */
  private async initialise(): Promise<void> {
    try {
      const seq = await this.conn!.get(this.seqKey);
      this.lastId = `${seq ?? 0}-0`;
    } catch {
      this.lastId = null;
    }
  }

  private async loop(): Promise<void> {
    this.loopRunning = true;
    const conn = this.conn;
    try {
      while (conn && this.conn === conn && !this.closed) {
        if (this.lastId === null) {
          await this.initialise();
          if (this.lastId === null) {
            await new Promise((r) => setTimeout(r, 500));
            continue;
          }
          this.wakeAll(() => true);
        }
        let reply: XReadReply;
        try {
          reply = (await conn.xread('COUNT', READ_COUNT, 'BLOCK', BLOCK_MS, 'STREAMS', this.logKey, this.lastId)) as XReadReply;
        } catch {
          if (this.conn !== conn) break;
          await new Promise((r) => setTimeout(r, 200));
          continue;
        }
        for (const [, entries] of reply ?? []) {
          for (const [id, fields] of entries) {
            this.lastId = id;
            const event = this.parse(id, fields);
            this.wakeAll((s) => s.matches(event));
          }
        }
      }
    } finally {
      this.loopRunning = false;
    }
  }

  private wakeAll(which: (s: Subscriber) => boolean): void {
    for (const s of this.subscribers) {
      if (!which(s)) continue;
      s.woken = true;
      s.wake?.();
    }
  }

  private stop(): void {
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    this.lingerTimer = null;
    const conn = this.conn;
    this.conn = null;
    this.lastId = null;
    if (conn) this.connections.release(conn);
  }
}
