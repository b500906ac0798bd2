/**
 * Export and import of an embedded palace at two sizes side by side (N and 4·N synthetic
 * drawers with 384-d vectors, plus N/10 events), to show the throughput and that memory stays
 * bounded: the RSS growth during export and import (sampled every 20 ms over the operation,
 * minus the RSS just before it) should not grow with the palace. Median of 3 runs per size;
 * each import goes into a fresh palace. With `--cluster` the import also runs into a throwaway
 * cluster palace (OpenSearch, Neo4j, Redis), which is what `migrate --to cluster` writes.
 *
 *   source deploy/local/env.sh && npx tsx bench/backup.bench.ts [--drawers 20000] [--cluster] [--write]
 *
 * Synthetic vectors, no model needed (the model identity in the header is a fixed one).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../app/config.js';
import type { ModelIdentity } from '../embed/model-identity.js';
import { exportPalace } from '../palace/backup/export.js';
import { importPalace } from '../palace/backup/import.js';
import type { PalaceStores } from '../stores/ports/palace-stores.js';
import { openStores } from '../stores/open.js';
import { drawer, randomUnitVector, seededRandom } from '../tests/contract/drawer-index.fixtures.js';
import { clusterConfig, dropClusterPalace } from '../tests/helpers/cluster-palace.js';
import { writeReadmeSection } from './lib/report.js';
import { machine, median } from './lib/stats.js';

const MODEL: ModelIdentity = { name: 'bench-model', dimension: 384, weightsSha256: 'b'.repeat(64) };
const RUNS = 3;
const args = process.argv.slice(2);
const base = Number(args[args.indexOf('--drawers') + 1] ?? 0) || 20_000;
const withCluster = args.includes('--cluster');

async function fill(stores: PalaceStores, n: number): Promise<void> {
  const rnd = seededRandom(n);
  for (let start = 0; start < n; start += 1000) {
    const rows = Array.from({ length: Math.min(1000, n - start) }, (_, k) => {
      const i = start + k;
      return drawer(`bk_${String(i).padStart(8, '0')}`, `drawer ${i} of the backup benchmark, room ${i % 50}, file ${i % 1000}`, randomUnitVector(rnd, 384), {
        wing: i % 20 ? 'common' : 'rare',
        room: `room_${i % 50}`,
      });
    });
    await stores.drawers.upsert(rows);
  }
  for (let i = 0; i < n / 10; i++) {
    await stores.logstream.append({ type: 'note', stream: 'bench', room: 'general', topic: null, from_agent: 'bench', to_agent: null, correlation_id: null,
      branch: null, base_commit: null, status: null, body: `event ${i}`, metadata_json: '{}', artifact_ids: [] });
  }
}

/** Runs `fn`, sampling RSS; returns seconds and the peak RSS growth in MiB. */
async function measured(fn: () => Promise<unknown>): Promise<{ seconds: number; rssGrowthMb: number }> {
  const before = process.memoryUsage().rss;
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const started = performance.now();
  try {
    await fn();
  } finally {
    clearInterval(timer);
  }
  peak = Math.max(peak, process.memoryUsage().rss);
  return { seconds: (performance.now() - started) / 1000, rssGrowthMb: (peak - before) / 2 ** 20 };
}

interface Row {
  size: number;
  records: number;
  bytes: number;
  exp: { seconds: number; rssGrowthMb: number }[];
  imp: { seconds: number; rssGrowthMb: number }[];
  cluster: { seconds: number; rssGrowthMb: number }[];
}

async function runSize(tmp: string, n: number): Promise<Row> {
  const source = await openStores(loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: path.join(tmp, `src-${n}`) }));
  await fill(source, n);
  const file = path.join(tmp, `export-${n}.jsonl.gz`);
  const row: Row = { size: n, records: n + n / 10, bytes: 0, exp: [], imp: [], cluster: [] };
  for (let r = 0; r < RUNS; r++) {
    row.exp.push(await measured(() => exportPalace(source, MODEL, file)));
    const target = await openStores(loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: path.join(tmp, `dst-${n}-${r}`) }));
    row.imp.push(await measured(() => importPalace(target, MODEL, file)));
    await target.close();
    if (withCluster) {
      const config = clusterConfig('bench-bk');
      const cluster = await openStores(config);
      try {
        row.cluster.push(await measured(() => importPalace(cluster, MODEL, file)));
      } finally {
        await cluster.close();
        await dropClusterPalace(config);
      }
    }
  }
  row.bytes = fs.statSync(file).size;
  await source.close();
  return row;
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mempalace-bench-backup-'));
try {
  const rows = [await runSize(tmp, base), await runSize(tmp, base * 4)];
  const cell = (xs: { seconds: number; rssGrowthMb: number }[], records: number) =>
    xs.length === 0 ? '—' : `${Math.round(records / median(xs.map((x) => x.seconds)))} rec/s, +${median(xs.map((x) => x.rssGrowthMb)).toFixed(0)} MiB`;
  const table = [
    '| drawers | records | file | export (median of 3) | import, embedded | import, cluster |',
    '|---|---|---|---|---|---|',
    ...rows.map((r) =>
      `| ${r.size} | ${r.records} | ${(r.bytes / 2 ** 20).toFixed(1)} MiB | ${cell(r.exp, r.records)} | ${cell(r.imp, r.records)} | ${
        cell(r.cluster, r.records)
      } |`
    ),
    '',
    `Machine: ${machine()}. "+N MiB" is the peak RSS growth during the operation.`,
  ].join('\n');
  console.log(table);
  if (args.includes('--write'))
    writeReadmeSection('## Backup: export and import', `npx tsx bench/backup.bench.ts --drawers ${base}${withCluster ? ' --cluster' : ''} --write`, table);
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
