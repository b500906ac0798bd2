/**
 * Large scans: peak RSS of one process that scans a generated tree of many small files into a
 * job manifest (written page by page) and walks all of its 64-file batches, at two tree sizes
 * side by side (default 10,000 and 100,000 files), with the embedded job store (SQLite) and the
 * cluster one (Redis). A dry-run mine: the scan and every batch's reading, decoding, chunking and
 * planning run, the embedder does not (it would only add its fixed model memory), so what grows
 * with the tree shows here. Each measurement is a fresh child process; bounded means the two
 * sizes' peaks stay close. Needs Redis (deploy/local/up.sh redis).
 *
 *   npx tsx bench/mine-scale.bench.ts                 # 10,000 and 100,000 files
 *   npx tsx bench/mine-scale.bench.ts 1000 10000
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createJobActivities } from '../jobs/activities.js';
import { loadConfig } from '../app/config.js';
import { MiniLmEmbedder } from '../embed/minilm.js';
import { openStores } from '../stores/open.js';
import { LocalJobEngine } from '../jobs/engines/local/runner.js';
import { generateSmallFiles, mineSpec, openClusterTestStores, uniquePalaceName } from '../tests/integration/temporal-harness.js';
import { machine, peakRssMb } from './lib/stats.js';
import type { JobProgress, JobSpec } from '../jobs/job.js';

const args = process.argv.slice(2);

if (args[0] === '--child') {
  // One measurement: <store> <source> <palace>; prints one JSON line.
  const [, store, source, palace] = args as [string, 'sqlite' | 'redis', string, string];
  const config = loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: palace });
  const embedder = new MiniLmEmbedder(config);
  const cluster = store === 'redis' ? await openClusterTestStores(palace, uniquePalaceName('scale')) : undefined;
  const embedded = cluster ? undefined : await openStores<JobSpec, JobProgress>(config);
  const stores = cluster ?? embedded!;
  const palaceName = cluster ? cluster.palaceName : embedded!.palace;
  const engine = new LocalJobEngine({ palace: palaceName, jobs: stores.jobs, locks: stores.locks,
    activities: createJobActivities({ config, stores, embedder, workspace: path.join(palace, 'workspace') }) });
  const t = performance.now();
  const started = await engine.start(mineSpec(source, 'scale', { dryRun: true }));
  const done = await engine.wait(started.job_id, 6 * 3_600_000);
  const seconds = (performance.now() - t) / 1000;
  await engine.close();
  await cluster?.dropRedis();
  await stores.close();
  await embedder.close();
  process.stdout.write(`${JSON.stringify({ state: done.state, files: done.files_seen, seconds, peakRssMb: peakRssMb() })}\n`);
  process.exit(0);
}

const sizes = (args.length > 0 ? args : ['10000', '100000']).map(Number);
const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mempalace-scale-bench-'));
const here = fileURLToPath(import.meta.url);
try {
  const rows: string[] = [];
  for (const n of sizes) {
    const source = path.join(tmp, `tree-${n}`);
    await generateSmallFiles(source, n, 5);
    for (const store of ['sqlite', 'redis'] as const) {
      const palace = path.join(tmp, `palace-${n}-${store}`);
      const child = spawnSync(process.execPath, ['--import', 'tsx', here, '--child', store, source, palace], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      const line = child.stdout.trim().split('\n').at(-1) ?? '';
      if (child.status !== 0 || !line.startsWith('{')) throw new Error(`child (${n}, ${store}) failed: ${child.stderr}`);
      const r = JSON.parse(line) as { state: string; files: number; seconds: number; peakRssMb: number };
      if (r.state !== 'completed' || r.files !== n) throw new Error(`child (${n}, ${store}): ${r.state}, ${r.files} files`);
      rows.push(
        `| ${n.toLocaleString('en')} | ${store === 'sqlite' ? 'SQLite' : 'Redis'} | ${r.seconds.toFixed(1)} | ${(n / r.seconds).toFixed(0)} | ${
          Math.round(r.peakRssMb)
        } |`,
      );
      await fs.rm(palace, { recursive: true, force: true });
    }
    await fs.rm(source, { recursive: true, force: true });
  }
  console.log(`\n${machine()}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' / ')} at the end\n`);
  console.log('| files | job store | scan + batches (dry run), s | files/s | peak RSS of the process, MiB |');
  console.log('|---|---|---|---|---|');
  for (const r of rows) console.log(r);
} finally {
  await fs.rm(tmp, { recursive: true, force: true });
}
