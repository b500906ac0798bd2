/**
 * Jobs: the Temporal path against the in-process runner on the same input. A seeded tree of small
 * files (one short chunk each, so orchestration and storage weigh as much as they can against
 * embedding) is mined into a fresh palace: by the embedded profile's local runner, then as a
 * Temporal workflow with 1 and with 2 workers polling the task queue (workers in this process,
 * one shared embedder; Redis leases and job store, SQLite drawers). Reports files/s, the
 * overhead of the Temporal path over the local runner, and workflow history events (all runs of
 * the continue-as-new chain) per 1,000 files. Needs the local engines (deploy/local/up.sh
 * temporal redis) and the model.
 *
 *   npx tsx bench/temporal.bench.ts            # 2000 files
 *   npx tsx bench/temporal.bench.ts 5000
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { openRuntime } from '../cli/runtime.js';
import { loadConfig } from '../core/config.js';
import { MiniLmEmbedder } from '../embed/minilm.js';
import { workflowsPath } from '../workflows/temporal/worker.js';
import type { JobWorker } from '../workflows/temporal/worker.js';
import {
  drawerIds, generateSmallFiles, inProcessWorker, mineSpec, openClusterTestStores, openEngine, uniquePalaceName,
} from '../tests/integration/temporal-harness.js';
import { machine } from './lib/stats.js';

const FILES = Number(process.argv[2] ?? 2000);

interface Row { path: string; seconds: number; filesPerS: number; events?: number; runs?: number }

const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mempalace-temporal-bench-'));
const source = path.join(tmp, 'source');
await generateSmallFiles(source, FILES, 99);
const embedder = new MiniLmEmbedder(loadConfig());
await embedder.embed(['warm up the model before timing']);
const rows: Row[] = [];

async function local(): Promise<string[]> {
  const rt = await openRuntime(loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: path.join(tmp, 'palace-local') }), { embedder });
  try {
    const t = performance.now();
    const started = await rt.jobs.start(mineSpec(source, 'bench'));
    const done = await rt.jobs.wait(started.job_id, 3_600_000);
    const seconds = (performance.now() - t) / 1000;
    if (done.state !== 'completed') throw new Error(`local mine ${done.state}: ${done.error}`);
    rows.push({ path: 'local runner', seconds, filesPerS: FILES / seconds });
    return drawerIds(rt.stores.drawers, 'bench');
  } finally {
    await rt.close();
  }
}

async function temporal(workers: number, bundle: Awaited<ReturnType<typeof bundleWorkflowCode>>): Promise<string[]> {
  const name = uniquePalaceName(`bench${workers}`);
  const stores = await openClusterTestStores(path.join(tmp, `palace-${name}`), name);
  const taskQueue = `tq-${name}`;
  const pool: JobWorker[] = [];
  for (let i = 0; i < workers; i++) pool.push(await inProcessWorker(stores, embedder, taskQueue, { workflowBundle: bundle }));
  const running = pool.map((w) => w.run());
  const engine = await openEngine(stores, taskQueue);
  try {
    const t = performance.now();
    const started = await engine.start(mineSpec(source, 'bench'));
    const done = await engine.wait(started.job_id, 3_600_000);
    const seconds = (performance.now() - t) / 1000;
    if (done.state !== 'completed') throw new Error(`temporal mine ${done.state}: ${done.error}`);
    let events = 0;
    let runs = 0;
    const client = engine.temporalClient;
    for await (const info of client.workflow.list({ query: `WorkflowId = "${done.lock_key}"` })) {
      runs++;
      events += (await client.workflow.getHandle(done.lock_key, info.runId).fetchHistory()).events?.length ?? 0;
    }
    rows.push({ path: `Temporal, ${workers} worker${workers > 1 ? 's' : ''}`, seconds, filesPerS: FILES / seconds, events, runs });
    return await drawerIds(stores.drawers, 'bench');
  } finally {
    for (const w of pool) w.shutdown();
    await Promise.all(running);
    await engine.close();
    await stores.dropRedis();
    await stores.close();
  }
}

try {
  const bundle = await bundleWorkflowCode({ workflowsPath: workflowsPath() });
  const expected = await local();
  for (const n of [1, 2]) {
    const ids = await temporal(n, bundle);
    if (JSON.stringify(ids) !== JSON.stringify(expected)) throw new Error(`Temporal (${n} workers) filed different drawers than the local runner`);
  }
  const base = rows[0]!.seconds;
  console.log(`\n${FILES} files, ${machine()}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' / ')} at the end\n`);
  console.log('| path | wall time, s | files/s | overhead vs local | history events (runs) | events per 1,000 files |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) {
    const overhead = r === rows[0] ? '—' : `${(((r.seconds - base) / base) * 100).toFixed(1)} %`;
    const ev = r.events === undefined ? '—' : `${r.events} (${r.runs})`;
    const per = r.events === undefined ? '—' : String(Math.round((r.events / FILES) * 1000));
    console.log(`| ${r.path} | ${r.seconds.toFixed(1)} | ${r.filesPerS.toFixed(1)} | ${overhead} | ${ev} | ${per} |`);
  }
} finally {
  await embedder.close();
  await fs.rm(tmp, { recursive: true, force: true });
}
