/**
 * The embedded drawer index (SQLite + FTS5 + HNSW): upsert throughput for 10k drawers in batches
 * of 500 and the HNSW graph's share of it, reopen time, and knn latency and recall@10 at 10k and
 * 100k rows, unfiltered and with unselective (95 %) and selective (2 %) filters, and the longest
 * event-loop stall of one 15,000-drawer write. Synthetic clustered 384-d unit vectors and
 * drawer-sized texts; no model needed.
 *
 *   npx tsx bench/drawer-index.bench.ts            # prints a Markdown table for bench/README.md
 *   npx tsx bench/drawer-index.bench.ts 10000      # only the 10k size
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import type { DrawerWrite } from '../core/drawer.js';
import type { DrawerFilter } from '../stores/ports/drawers/drawer-index.js';
import { HnswGraph } from '../stores/embedded/drawers/ann-hnsw-index.js';
import type { SqliteDrawerIndex } from '../stores/embedded/drawers/sqlite-drawer-index.js';
import { openSqliteDrawerIndex } from '../stores/embedded/drawers/sqlite-drawer-index.js';
import { bruteForce, filedAt, nearVector, seededRandom } from '../tests/contract/drawer-index.fixtures.js';
import { machine, median, percentile } from './lib/stats.js';
import { syntheticCorpus } from './lib/synthetic-drawers.js';

const QUERIES = 100;
const WORDS = 'palace drawer wing room agent search memory vector token graph tunnel hallway diary entity source chunk mined commit query result'.split(' ');

function corpus(n: number, seed: number): { rows: DrawerWrite[]; centers: Float32Array[] } {
  return syntheticCorpus(n, seed, (i, rnd) => `${Array.from({ length: 80 }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(' ')} parseHttpUrl_${i % 97}`);
}

async function measure(n: number, lines: string[]): Promise<void> {
  const dir = mkdtempSync(join(os.tmpdir(), 'drawer-index-bench-'));
  try {
    const { rows, centers } = corpus(n, n);
    let index = await openSqliteDrawerIndex(dir);
    const batch = 500;
    let t = performance.now();
    for (let i = 0; i < n; i += batch) await index.upsert(rows.slice(i, i + batch));
    // A search catches the graph up with every write, so the time includes all HNSW inserts.
    await index.knn(rows[0]!.embedding, 1);
    const writeMs = performance.now() - t;
    lines.push(
      `| ${n} rows | upsert in batches of ${batch} (incl. HNSW insert and periodic persist) | ${Math.round(n / (writeMs / 1000))} drawers/s (${
        (writeMs / 1000).toFixed(1)
      } s) |`,
    );
    // The graph's share of those writes: the same vectors into an in-memory graph alone.
    const graph = HnswGraph.empty(index.dimension, n);
    t = performance.now();
    for (const [i, r] of rows.entries()) graph.put(i + 1, r.embedding);
    const graphMs = performance.now() - t;
    lines.push(`| ${n} rows | HNSW graph alone: insert the same vectors | ${(graphMs / 1000).toFixed(1)} s (${(graphMs / n).toFixed(2)} ms per vector) |`);
    t = performance.now();
    await index.close();
    lines.push(`| ${n} rows | close (persist HNSW file) | ${(performance.now() - t).toFixed(0)} ms |`);
    t = performance.now();
    index = await openSqliteDrawerIndex(dir);
    lines.push(`| ${n} rows | reopen (checksum + load + reconcile, outcome ${index.annStatus.outcome}) | ${(performance.now() - t).toFixed(0)} ms |`);

    const rnd = seededRandom(7);
    const queries = Array.from({ length: QUERIES }, (_, q) => nearVector(rnd, centers[(q * 13) % centers.length]!));
    const cases: { name: string; filter?: DrawerFilter; keep: (d: DrawerWrite) => boolean }[] = [
      { name: 'no filter', keep: () => true },
      { name: 'wing filter, 95 % of rows (HNSW, over-fetch)', filter: { wing: 'common' }, keep: (d) => d.meta.wing === 'common' },
      { name: 'since filter, 30 % of rows (HNSW + filter callback above 4 000 rows)', filter: { since: filedAt(Math.floor(n * 0.7)) }, keep: (d) =>
        d.meta.filed_at >= filedAt(Math.floor(n * 0.7)) },
      { name: 'room filter, 2 % of rows (exact scan)', filter: { room: 'room_7' }, keep: (d) => d.meta.room === 'room_7' },
    ];
    for (const c of cases) {
      const pool = rows.filter(c.keep);
      const times: number[] = [];
      let found = 0;
      for (const q of queries) {
        const s = performance.now();
        const hits = await index.knn(q, 10, c.filter);
        times.push(performance.now() - s);
        const truth = new Set(bruteForce(pool, q, 10).map((b) => b.id));
        found += hits.filter((h) => truth.has(h.drawer.id)).length;
      }
      lines.push(
        `| ${n} rows | knn k=10, ${c.name} | median ${median(times).toFixed(2)} ms, p95 ${percentile(times, 0.95).toFixed(2)} ms, recall@10 ${
          (found / (QUERIES * 10)).toFixed(3)
        } |`,
      );
    }
    const lexTimes: number[] = [];
    for (let q = 0; q < QUERIES; q++) {
      const s = performance.now();
      await index.lexical([`parsehttpurl_${q % 97}`, 'tunnel'], 40, { wing: 'common' });
      lexTimes.push(performance.now() - s);
    }
    lines.push(
      `| ${n} rows | lexical k=40, 2 tokens, wing filter | median ${median(lexTimes).toFixed(2)} ms, p95 ${percentile(lexTimes, 0.95).toFixed(2)} ms |`,
    );
    const stall = await bigFileStall(index, n);
    lines.push(
      `| ${n} rows | one upsert of ${BIG_FILE} drawers (a large mined file): longest event-loop stall until the graph holds them | ${
        stall.longestMs.toFixed(0)
      } ms (graph current after ${(stall.totalMs / 1000).toFixed(1)} s) |`,
    );
    await index.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const BIG_FILE = 15_000;

/** Upserts BIG_FILE fresh drawers while a 5 ms timer records the longest gap between its ticks. */
async function bigFileStall(index: SqliteDrawerIndex, n: number): Promise<{ longestMs: number; totalMs: number }> {
  const big = corpus(BIG_FILE, n + 1).rows.map((r) => ({ ...r, id: `big-${r.id}` }));
  const target = index.annStatus.size + BIG_FILE;
  let last = performance.now();
  let longestMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longestMs = Math.max(longestMs, now - last);
    last = now;
  }, 5);
  const start = performance.now();
  await index.upsert(big);
  while (index.annStatus.size < target) await new Promise((resolve) => setImmediate(resolve));
  const totalMs = performance.now() - start;
  clearInterval(timer);
  return { longestMs: Math.max(longestMs, performance.now() - last), totalMs };
}

const sizes = process.argv[2] ? [Number(process.argv[2])] : [10_000, 100_000];
const lines = ['| size | measure | result |', '|---|---|---|'];
for (const n of sizes) await measure(n, lines);
console.log(`Measured ${machine()}.\n`);
console.log(lines.join('\n'));
