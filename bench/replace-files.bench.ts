/**
 * Writing a mining batch: one `replaceFile` per file (what mining did before) against one
 * `replaceFiles` for the whole batch, on both drawer stores with their default write policy
 * (OpenSearch: refresh on write, so a tool call sees what it wrote). Each round writes 10
 * batches of 64 files × 3 chunks (1,920 drawers) into a fresh palace, the next round rewrites
 * them with new content (the re-mine of changed files); rounds alternate between the two ways
 * and the table gives the median of 3 rounds each. Synthetic vectors; no model needed.
 *
 *   source deploy/local/env.sh && npx tsx bench/replace-files.bench.ts
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../app/config.js';
import { openSqliteDrawerIndex } from '../stores/embedded/drawers/sqlite-drawer-index.js';
import { dropPalaceIndices } from '../stores/opensearch/drawer-mapping.js';
import { OpenSearchDrawerIndex } from '../stores/opensearch/opensearch-drawer-index.js';
import type { DrawerStore } from '../stores/ports/palace-stores.js';
import type { FileReplacement } from '../stores/ports/drawers/file-states.js';
import { drawer, randomUnitVector, seededRandom } from '../tests/contract/drawer-index.fixtures.js';
import { machine, median } from './lib/stats.js';

const BATCHES = 10;
const FILES = 64;
const CHUNKS = 3;
const ROUNDS = 3;

function batches(version: number): FileReplacement[][] {
  const rnd = seededRandom(version);
  return Array.from({ length: BATCHES }, (_, b) =>
    Array.from({ length: FILES }, (_, f) => {
      const sourceFile = `/repo/dir_${b}/file_${f}.ts`;
      const drawers = Array.from({ length: CHUNKS }, (_, c) =>
        drawer(`d_${b}_${f}_${c}`, `version ${version} of chunk ${c} in ${sourceFile}`, randomUnitVector(rnd, 384), { wing: 'bench', source_file: sourceFile,
          chunk_index: c }));
      return { sourceFile, drawers,
        state: { wing: 'bench', source_file: sourceFile, size: 100, mtime_ms: version, content_sha256: String(version).repeat(64).slice(0, 64),
          drawer_count: CHUNKS, mined_at: '2026-11-30T00:00:00Z' } };
    }));
}

async function write(index: DrawerStore, data: FileReplacement[][], batched: boolean): Promise<number> {
  const started = performance.now();
  for (const batch of data) {
    if (batched) await index.replaceFiles('bench', batch);
    else for (const f of batch) await index.replaceFile('bench', f.sourceFile, f.drawers, f.state);
  }
  return (BATCHES * FILES) / ((performance.now() - started) / 1000);
}

async function run(open: () => Promise<{ index: DrawerStore; drop: () => Promise<void> }>, batched: boolean): Promise<{ fresh: number; rewrite: number }> {
  const { index, drop } = await open();
  try {
    const fresh = await write(index, batches(1), batched);
    const rewrite = await write(index, batches(2), batched);
    if ((await index.count({ wing: 'bench' })) !== BATCHES * FILES * CHUNKS) throw new Error('wrong drawer count after the rewrite');
    return { fresh, rewrite };
  } finally {
    await drop();
  }
}

const config = loadConfig();
const stores: [string, () => Promise<{ index: DrawerStore; drop: () => Promise<void> }>][] = [
  ['embedded (SQLite)', async () => {
    const dir = mkdtempSync(join(os.tmpdir(), 'replace-files-bench-'));
    const index = await openSqliteDrawerIndex(dir);
    return { index, drop: async () => {
      await index.close();
      rmSync(dir, { recursive: true, force: true });
    } };
  }],
  ['OpenSearch (refresh on write)', async () => {
    const index = await OpenSearchDrawerIndex.open({ url: config.opensearch.url, palaceName: `bench-rf-${randomBytes(4).toString('hex')}` });
    return { index, drop: async () => {
      await dropPalaceIndices(index.connection);
      await index.close();
    } };
  }],
];

const rows: string[] = [];
for (const [name, open] of stores) {
  const results = { perFile: [] as { fresh: number; rewrite: number }[], batch: [] as { fresh: number; rewrite: number }[] };
  for (let r = 0; r < ROUNDS; r++) {
    results.perFile.push(await run(open, false));
    results.batch.push(await run(open, true));
  }
  const cell = (xs: { fresh: number; rewrite: number }[], key: 'fresh' | 'rewrite') => median(xs.map((x) => x[key]));
  for (const key of ['fresh', 'rewrite'] as const) {
    const perFile = cell(results.perFile, key);
    const batch = cell(results.batch, key);
    rows.push(
      `| ${name} | ${key === 'fresh' ? 'new files' : 'changed files'} | ${perFile.toFixed(0)} | ${batch.toFixed(0)} | ${(batch / perFile).toFixed(1)}× |`,
    );
    console.error(rows[rows.length - 1]);
  }
}
console.log(
  `${machine()}\n\n| store | files | replaceFile per file, files/s | replaceFiles per batch, files/s | ratio |\n|---|---|---|---|---|\n${rows.join('\n')}`,
);
