/**
 * Logstream on Redis beside the embedded profile, on the same data and machine: append rate
 * (one client, and four clients at once), list rate (cursor only; stream + to_agent filters) and
 * event_wait wake-up latency when another client appends. Everything goes through the palace
 * operations the MCP tools call.
 *
 * Run: `source deploy/local/env.sh && npx tsx bench/redis-logstream.bench.ts [--write]`; `--write`
 * replaces the "Logstream: Redis vs embedded" section of bench/README.md with the table printed.
 * Redis keys live under a throwaway palace name and are dropped at the end.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../app/config.js';
import { eventAppend, eventList, eventWait, type LogstreamContext } from '../palace/logstream/logstream.js';
import { openSqliteLogstream } from '../stores/embedded/logstream/sqlite-logstream.js';
import type { LogstreamStore } from '../stores/ports/palace-stores.js';
import { RedisConnections } from '../stores/redis/connection.js';
import { openRedisLogstream } from '../stores/redis/logstream/redis-logstream.js';
import { publishTable } from './lib/report.js';
import { latencySummary, machine, ratePerSecond } from './lib/stats.js';

const EVENTS = 5_000;
const CLIENTS = 4;
const PER_CLIENT = 1_000;
const LISTS = 2_000;
const WAKES = 60;

interface Profile {
  name: string;
  /** A new client of the same store (its own connection or file handle). */
  open(): Promise<LogstreamStore>;
  drop(): Promise<void>;
}

const ctxOf = (logstream: LogstreamStore): LogstreamContext => ({ logstream, mesh: { replicaName: 'bench' } });

/** Event i of the shared data set: ~200-byte body, 7 streams, 13 writers, 11 addressees + broadcasts. */
const eventArgs = (i: number) => ({
  type: 'bench.append',
  stream: `project/p${i % 7}`,
  room: 'r',
  from_agent: `agent-${i % 13}`,
  to_agent: i % 10 === 0 ? '*' : `agent-${i % 11}`,
  body: `event ${i} `.repeat(20),
  metadata: { i },
});

async function appendSequential(p: Profile): Promise<number> {
  const logstream = await p.open();
  const ctx = ctxOf(logstream);
  const started = performance.now();
  for (let i = 0; i < EVENTS; i++) await eventAppend(ctx, eventArgs(i));
  const perSecond = ratePerSecond(EVENTS, started);
  await logstream.close();
  return perSecond;
}

async function appendConcurrent(p: Profile): Promise<number> {
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => p.open()));
  const started = performance.now();
  await Promise.all(clients.map(async (logstream, c) => {
    const ctx = ctxOf(logstream);
    for (let i = 0; i < PER_CLIENT; i++) await eventAppend(ctx, eventArgs(EVENTS + c * PER_CLIENT + i));
  }));
  const perSecond = ratePerSecond(CLIENTS * PER_CLIENT, started);
  await Promise.all(clients.map((l) => l.close()));
  return perSecond;
}

async function listRate(p: Profile, args: Record<string, unknown>): Promise<number> {
  const logstream = await p.open();
  const ctx = ctxOf(logstream);
  const ids = (await eventList(ctx, { limit: 500, order: 'desc' })).events.map((e) => e.id);
  const started = performance.now();
  for (let i = 0; i < LISTS; i++) await eventList(ctx, { ...args, since_event_id: ids[i % ids.length] });
  const perSecond = ratePerSecond(LISTS, started);
  await logstream.close();
  return perSecond;
}

/** From the start of another client's append to the waiter's return. */
async function wakeLatency(p: Profile): Promise<number[]> {
  const waiter = await p.open();
  const writer = await p.open();
  const waitCtx = ctxOf(waiter);
  const writeCtx = ctxOf(writer);
  let cursor = (await eventAppend(writeCtx, { type: 'bench.start', stream: 'b', room: 'r', from_agent: 'bench' })).event.id;
  const latencies: number[] = [];
  for (let i = 0; i < WAKES; i++) {
    const waiting = eventWait(waitCtx, { since_event_id: cursor, to_agent: 'waiter', timeout_ms: 10_000 });
    await new Promise((r) => setTimeout(r, 30 + Math.random() * 200));
    const sent = performance.now();
    await eventAppend(writeCtx, { type: 'bench.ping', stream: 'b', room: 'r', from_agent: 'writer', to_agent: 'waiter' });
    const result = await waiting;
    latencies.push(performance.now() - sent);
    const event = result.events[0];
    if (!event) throw new Error('wait timed out');
    cursor = event.id;
  }
  await Promise.all([waiter.close(), writer.close()]);
  return latencies;
}

async function measure(p: Profile) {
  try {
    const single = await appendSequential(p);
    const concurrent = await appendConcurrent(p);
    const listAll = await listRate(p, { limit: 50 });
    const listFiltered = await listRate(p, { to_agent: 'agent-3', stream: 'project/p3', limit: 50 });
    const wake = await wakeLatency(p);
    return { single, concurrent, listAll, listFiltered, wake };
  } finally {
    await p.drop();
  }
}

function embeddedProfile(pollIntervalMs: number): Profile {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mp-bench-ls-'));
  return {
    name: 'embedded',
    open: () => openSqliteLogstream(dir, { pollIntervalMs }),
    drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

function redisProfile(): Profile {
  const options = { url: loadConfig().redis.url, palaceName: `bench-ls-${randomBytes(4).toString('hex')}` };
  return {
    name: 'redis',
    open: () => openRedisLogstream(options),
    drop: async () => {
      const admin = new RedisConnections(options);
      await admin.dropPalace();
      await admin.close();
    },
  };
}

async function redisFacts(): Promise<string> {
  const admin = new RedisConnections({ url: loadConfig().redis.url, palaceName: 'bench-info' });
  const conn = admin.command();
  const info = await conn.info('server');
  const persistence = await conn.info('persistence');
  const fsync = (await conn.call('CONFIG', 'GET', 'appendfsync').catch(() => ['', '?'])) as string[];
  await admin.close();
  const field = (text: string, name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(text)?.[1]?.trim() ?? '?';
  return `Redis ${field(info, 'redis_version')} on localhost, aof_enabled=${field(persistence, 'aof_enabled')}, appendfsync ${fsync[1] ?? '?'}`;
}

const fmt = (n: number) => n.toFixed(0);

async function main(): Promise<void> {
  const facts = await redisFacts();
  const redis = await measure(redisProfile());
  const embedded = await measure(embeddedProfile(250));

  const table = [
    `Measured ${machine()}; ${facts}; embedded: SQLite WAL, synchronous=FULL, data_version poll 250 ms. Same data set for both: ${EVENTS} events with ~200-byte bodies over 7 streams, 13 writers and 11 addressees plus broadcasts, through the palace operations.`,
    '',
    '| measure | Redis | embedded |',
    '|---|---|---|',
    `| event_append, one client, sequential (${EVENTS} events) | ${fmt(redis.single)} events/s | ${fmt(embedded.single)} events/s |`,
    `| event_append, ${CLIENTS} clients (connections / file handles) × ${PER_CLIENT} concurrently, one process | ${fmt(redis.concurrent)} events/s | ${
      fmt(embedded.concurrent)
    } events/s |`,
    `| event_list, limit 50, since_event_id cursor, ${EVENTS + CLIENTS * PER_CLIENT} events stored | ${fmt(redis.listAll)} lists/s | ${
      fmt(embedded.listAll)
    } lists/s |`,
    `| event_list, stream + to_agent filters, limit 50, cursor | ${fmt(redis.listFiltered)} lists/s | ${fmt(embedded.listFiltered)} lists/s |`,
    `| event_wait wake-up after another client's append (${WAKES} wakes, from append start) | ${latencySummary(redis.wake)} | ${
      latencySummary(embedded.wake)
    } |`,
    '',
    "Redis appends are one FCALL round trip each, acknowledged once Redis wrote them to the AOF (fsync once a second), so unlike SQLite with synchronous=FULL they do not wait for a disk flush per event, and concurrent clients overlap their round trips. Lists cost two or more round trips (cursor id lookup, then stream ranges; a filtered list reads one log entry per index candidate, pipelined) plus reply parsing, so the embedded profile, reading a local file in-process, lists faster. Redis wake-ups come from the tailer's XREAD BLOCK, not from a poll.",
  ].join('\n');
  publishTable('## Logstream: Redis vs embedded', 'source deploy/local/env.sh && npx tsx bench/redis-logstream.bench.ts --write', table);
}

await main();
