/**
 * Logstream mesh benchmark: how fast one anti-entropy round (docs/logstream.md §8.3) pulls N events
 * (every tenth citing a 2 KiB artifact) from one replica into another, for each pair of
 * adapters, and what a round costs when there is nothing to pull. Replicas talk through the
 * in-process transport (the palace functions behind `/sync/*`, JSON in between), so the figures
 * are the store side of a round; HTTP adds one request per 500 events and per artifact.
 *
 * Run: `source deploy/local/env.sh && npx tsx bench/mesh-sync.bench.ts [--events N] [--runs R] [--write]`
 * (defaults 5 000 events, 3 runs; `--write` replaces the "Logstream mesh" section of bench/README.md).
 */
import { createPublicKey, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../app/config.js';
import { eventAppend, patchSubmit, type LogstreamContext } from '../palace/logstream/logstream.js';
import { pullFromPeer } from '../palace/logstream/sync.js';
import { openSqliteLogstream } from '../stores/embedded/logstream/sqlite-logstream.js';
import type { LogstreamStore } from '../stores/ports/palace-stores.js';
import { RedisConnections } from '../stores/redis/connection.js';
import { openRedisLogstream } from '../stores/redis/logstream/redis-logstream.js';
import { InProcessTransport } from '../tests/helpers/sync-transport.js';
import { publishTable } from './lib/report.js';
import { machine, median, ratePerSecond } from './lib/stats.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const EVENTS = arg('events', 5_000);
const RUNS = arg('runs', 3);

type Kind = 'sqlite' | 'redis';

async function openReplica(kind: Kind): Promise<{ logstream: LogstreamStore; drop(): Promise<void> }> {
  if (kind === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mp-bench-mesh-'));
    const logstream = await openSqliteLogstream(dir);
    return { logstream, drop: async () => {
      await logstream.close();
      fs.rmSync(dir, { recursive: true, force: true });
    } };
  }
  const options = { url: loadConfig().redis.url, palaceName: `bench-mesh-${randomBytes(6).toString('hex')}` };
  const logstream = await openRedisLogstream(options);
  return {
    logstream,
    drop: async () => {
      await logstream.close();
      const admin = new RedisConnections(options);
      await admin.dropPalace();
      await admin.close();
    },
  };
}

async function fill(logstream: LogstreamStore, count: number): Promise<void> {
  const ctx: LogstreamContext = { logstream, mesh: { replicaName: 'bench' } };
  for (let i = 0; i < count; i++) {
    const fields = { stream: `project/p${i % 7}`, from_agent: `agent-${i % 13}`, to_agent: `agent-${i % 11}`, body: `event ${i} `.repeat(20), metadata: { i } };
    if (i % 10 === 0) await patchSubmit(ctx, { ...fields, content: `diff ${i}\n`.repeat(256) });
    else await eventAppend(ctx, { ...fields, type: 'bench.event', room: 'r' });
  }
}

async function measure(from: Kind, to: Kind): Promise<{ pull: number; idleMs: number }> {
  const pulls: number[] = [];
  const idles: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const source = await openReplica(from);
    const target = await openReplica(to);
    try {
      await fill(source.logstream, EVENTS);
      const transport = new InProcessTransport(new Map([['source', source.logstream]]));
      const peer = { name: 'source', url: 'mem://source' };
      const trust = new Map([[await source.logstream.replicaId(), createPublicKey(await source.logstream.signingKey())]]);
      let started = performance.now();
      const report = await pullFromPeer(target.logstream, transport, peer, { trust });
      if (report.pulled_events !== EVENTS) throw new Error(`pulled ${report.pulled_events} of ${EVENTS}`);
      pulls.push(ratePerSecond(EVENTS, started));
      started = performance.now();
      await pullFromPeer(target.logstream, transport, peer, { trust });
      idles.push(performance.now() - started);
    } finally {
      await Promise.all([source.drop(), target.drop()]);
    }
  }
  return { pull: median(pulls), idleMs: median(idles) };
}

async function main(): Promise<void> {
  const rows: string[] = [];
  for (const [from, to] of [['sqlite', 'sqlite'], ['redis', 'sqlite'], ['sqlite', 'redis'], ['redis', 'redis']] as const) {
    const m = await measure(from, to);
    rows.push(`| ${from} → ${to} | ${m.pull.toFixed(0)} events/s | ${m.idleMs.toFixed(1)} ms |`);
  }
  const table = [
    `Measured ${machine()}; ${EVENTS} events per round (one in ten with a 2 KiB artifact), median of ${RUNS} runs; SQLite synchronous=FULL (one fsync per applied event), Redis with AOF.`,
    '',
    '| source → target | first round (pull everything) | round with nothing to pull |',
    '|---|---|---|',
    ...rows,
  ].join('\n');
  publishTable('## Logstream mesh', 'source deploy/local/env.sh && npx tsx bench/mesh-sync.bench.ts --write', table);
}

await main();
