/**
 * Whole-wing metadata scans on the embedded profile, the work of a mine's finish step (hallways)
 * and of the room graph (traverse, find_tunnels): offset pages of `DrawerIndex.list` against the
 * id-ordered walk of `scanMetadata`, side by side on the same palace; then `buildHallwaysForWing`
 * and `loadRoomGraph` as the product runs them, each with the longest time it held the event loop
 * (a Temporal worker must heartbeat meanwhile). Medians over the runs.
 *
 *   npx tsx bench/drawer-walk.bench.ts                         # generated wing of 100,000 drawers, 3 runs
 *   npx tsx bench/drawer-walk.bench.ts 50000 5                 # drawers, runs
 *   npx tsx bench/drawer-walk.bench.ts --palace DIR --wing W   # an existing embedded palace (copy it first: it is migrated)
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { DrawerWrite } from '../core/drawer.js';
import { buildHallwaysForWing } from '../palace/graph/hallways.js';
import { loadRoomGraph } from '../palace/graph/room-graph.js';
import { openSqliteDrawerIndex } from '../stores/embedded/drawers/sqlite-drawer-index.js';
import { openSqliteGraphStore } from '../stores/embedded/sqlite-graph-store.js';
import { machine, median, seeded } from './lib/stats.js';

const { values, positionals } = parseArgs({ options: { palace: { type: 'string' }, wing: { type: 'string' } }, allowPositionals: true });
const DRAWERS = Number(positionals[0] ?? 100_000);
const RUNS = Number(positionals[1] ?? 3);
const PAGE = 5000;
const DIMENSION = 384;

/** A wing of `count` drawers whose entities follow a skewed vocabulary, as code chunks carry them. */
async function generatePalace(dir: string, wing: string, count: number): Promise<void> {
  const drawers = await openSqliteDrawerIndex(dir);
  const rnd = seeded(7);
  const vocabulary = Array.from({ length: 5000 }, (_, i) => `Entity${i}`);
  const pick = () => vocabulary[Math.floor(vocabulary.length * rnd() ** 3)]!;
  try {
    for (let start = 0; start < count; start += PAGE) {
      const batch: DrawerWrite[] = [];
      for (let i = start; i < Math.min(count, start + PAGE); i++) {
        const embedding = new Float32Array(DIMENSION).map(() => rnd() - 0.5);
        const norm = Math.hypot(...embedding);
        const entities = Array.from({ length: Math.floor(rnd() * 9) }, pick);
        batch.push({
          id: `drawer_${wing}_${i.toString(16).padStart(8, '0')}`,
          content: `chunk ${i} of a generated file`,
          embedding: embedding.map((v) => v / norm),
          meta: { wing, room: `room${i % 12}`, source_file: `/src/file${Math.floor(i / 14)}.ts`, chunk_index: i % 14, added_by: 'bench',
            filed_at: '2026-12-02T00:00:00.000000Z', hall: `hall${i % 5}`, ...(entities.length ? { entities: entities.join(';') } : {}) },
        });
      }
      await drawers.upsert(batch);
    }
  } finally {
    await drawers.close();
  }
}

/**
 * Wall time of `fn` and the longest stretch it held the event loop, in ms: the largest gap between
 * ticks of a 10 ms interval, closed by the tick after `fn` ends.
 */
async function held(fn: () => Promise<unknown>): Promise<{ ms: number; maxBlockMs: number }> {
  let last = performance.now();
  let maxGap = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
  }, 10);
  const started = performance.now();
  await fn();
  const ms = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 25));
  clearInterval(tick);
  return { ms, maxBlockMs: maxGap };
}

const tmp = values.palace ? undefined : await fs.mkdtemp(path.join(os.tmpdir(), 'mempalace-drawer-walk-'));
const dir = values.palace ?? path.join(tmp!, 'palace');
const wing = values.wing ?? 'walk';
try {
  if (tmp) await generatePalace(dir, wing, DRAWERS);
  const results: Record<string, { ms: number[]; block: number[] }> = {};
  const record = (name: string, r: { ms: number; maxBlockMs: number }) => {
    results[name] ??= { ms: [], block: [] };
    results[name].ms.push(r.ms);
    results[name].block.push(r.maxBlockMs);
  };
  let rows = 0;
  for (let run = 0; run < RUNS; run++) {
    // A fresh index per run: the room graph caches its facets per index instance.
    const drawers = await openSqliteDrawerIndex(dir);
    const graph = await openSqliteGraphStore(dir);
    try {
      record('list, offset pages of 5,000', await held(async () => {
        for (let offset = 0;; offset += PAGE) {
          const page = await drawers.list({ wing }, offset, PAGE);
          if (offset + PAGE >= page.total) break;
        }
      }));
      record('scanMetadata, id walk in pages of 5,000', await held(async () => {
        rows = 0;
        for (let after: string | undefined;;) {
          const page = await drawers.scanMetadata({ wing }, after, PAGE);
          rows += page.length;
          if (page.length < PAGE) break;
          after = page[page.length - 1]!.id;
        }
      }));
      record('buildHallwaysForWing', await held(() => buildHallwaysForWing({ drawers, graph }, wing)));
      record('loadRoomGraph (whole palace)', await held(() => loadRoomGraph(drawers)));
    } finally {
      await drawers.close();
      await graph.close();
    }
  }
  console.log(
    `\n${rows} drawers in wing ${wing}${tmp ? ' (generated)' : ` of ${dir}`}, ${RUNS} runs (medians), ${machine()}, load average ${
      os.loadavg().map((l) => l.toFixed(1)).join(' / ')
    } at the end\n`,
  );
  console.log('| step | wall time, ms (median) | runs, ms | longest event-loop block, ms (median) |');
  console.log('|---|---|---|---|');
  for (const [name, r] of Object.entries(results))
    console.log(`| ${name} | ${median(r.ms).toFixed(0)} | ${r.ms.map((x) => x.toFixed(0)).join(', ')} | ${median(r.block).toFixed(0)} |`);
} finally {
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
}
