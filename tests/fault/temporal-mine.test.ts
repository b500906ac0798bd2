/**
 * Temporal mines that survive their workers: a 2,000-file mine whose worker process is killed
 * with SIGKILL mid-run, and whose next worker is stopped with SIGTERM mid-run, ends (on a third
 * worker) with exactly the drawers of a clean run; and the same mine on a dev server told to
 * suggest continue-as-new after 200 history events completes in several small runs.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRuntime } from '../../app/runtime.js';
import { loadConfig } from '../../core/config.js';
import { MiniLmEmbedder } from '../../embed/minilm.js';
import type { TemporalJobEngine } from '../../jobs/engines/temporal/job-engine.js';
import type { ClusterTestStores } from '../integration/temporal-harness.js';
import {
  drawerIds, exited, generateSmallFiles, inProcessWorker, mineSpec, openClusterTestStores, openEngine, spawnWorker, startOwnDevServer, uniquePalaceName,
} from '../integration/temporal-harness.js';

const FILES = 2_000;

let tmp: string;
let source: string;
let embedder: MiniLmEmbedder;
let expected: string[];

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mempalace-temporal-fault-'));
  source = path.join(tmp, 'source');
  await generateSmallFiles(source, FILES, 17);
  embedder = new MiniLmEmbedder(loadConfig());
  // The clean run: the embedded profile's in-process runner on the same files.
  const clean = await openRuntime(loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: path.join(tmp, 'palace-clean') }), { embedder });
  try {
    const started = await clean.jobs.start(mineSpec(source, 'big'));
    expect((await clean.jobs.wait(started.job_id, 600_000)).state).toBe('completed');
    expected = await drawerIds(clean.stores.drawers, 'big');
  } finally {
    await clean.close();
  }
  expect(expected).toHaveLength(FILES);
});

afterAll(async () => {
  await embedder?.close();
  await fs.rm(tmp, { recursive: true, force: true });
});

async function waitForFiles(engine: TemporalJobEngine, jobId: string, atLeast: number): Promise<number> {
  for (;;) {
    const p = await engine.progress(jobId);
    if (p.state !== 'running') throw new Error(`job ended (${p.state}) before ${atLeast} files were seen`);
    if (p.files_seen >= atLeast) return p.files_seen;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('Temporal mine and its workers', () => {
  it('a worker killed with SIGKILL, then one stopped with SIGTERM, mid-run: a third finishes with the drawers of a clean run', async () => {
    const name = uniquePalaceName('crash');
    const taskQueue = `tq-${name}`;
    const palaceDir = path.join(tmp, 'palace-crash');
    const stores: ClusterTestStores = await openClusterTestStores(palaceDir, name);
    const engine = await openEngine(stores, taskQueue);
    const children: ChildProcess[] = [];
    try {
      const first = await spawnWorker(palaceDir, name, taskQueue);
      children.push(first);
      const started = await engine.start(mineSpec(source, 'big'));
      const seenAtKill = await waitForFiles(engine, started.job_id, 256);
      first.kill('SIGKILL');
      await exited(first);
      expect(first.signalCode).toBe('SIGKILL');
      const partial = await stores.drawers.count({ wing: 'big' });
      expect(partial).toBeGreaterThanOrEqual(seenAtKill);
      expect(partial).toBeLessThan(FILES);
      expect((await engine.progress(started.job_id)).state).toBe('running');

      const second = await spawnWorker(palaceDir, name, taskQueue, { WORKER_SHUTDOWN_GRACE_MS: '3000' });
      children.push(second);
      let stopped = '';
      second.stdout!.on('data', (c: Buffer) => (stopped += c.toString()));
      await waitForFiles(engine, started.job_id, 1_000);
      second.kill('SIGTERM');
      await exited(second);
      // A graceful stop: it finished or handed back its batch and exited on its own.
      expect(second.exitCode).toBe(0);
      expect(stopped).toContain('worker stopped');
      expect((await engine.progress(started.job_id)).state).toBe('running');

      const third = await spawnWorker(palaceDir, name, taskQueue);
      children.push(third);
      const done = await engine.wait(started.job_id, 600_000);
      expect(done.state).toBe('completed');
      expect(done.files_seen).toBe(FILES);
      expect(done.files_total).toBe(FILES);
      expect(await stores.drawers.count({ wing: 'big' })).toBe(FILES);
      expect(await drawerIds(stores.drawers, 'big')).toEqual(expected);
      expect(await stores.locks.holder(done.lock_key)).toBeNull();
    } finally {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      await Promise.all(children.map(exited));
      await engine.close();
      await stores.dropRedis();
      await stores.close();
    }
  });

  it('with continue-as-new suggested after 200 events, the mine runs as a chain of small histories and completes', async () => {
    const server = await startOwnDevServer(['limit.historyCount.suggestContinueAsNew=200']);
    const address = server.address;
    const name = uniquePalaceName('can');
    const taskQueue = `tq-${name}`;
    const stores = await openClusterTestStores(path.join(tmp, 'palace-can'), name);
    let engine: TemporalJobEngine | undefined;
    const worker = await (async () => {
      engine = await openEngine(stores, taskQueue, undefined, address);
      return inProcessWorker(stores, embedder, taskQueue, { address });
    })();
    const running = worker.run();
    try {
      const started = await engine!.start(mineSpec(source, 'big'));
      const done = await engine!.wait(started.job_id, 600_000);
      expect(done.state).toBe('completed');
      expect(done.files_seen).toBe(FILES);
      expect(await drawerIds(stores.drawers, 'big')).toEqual(expected);

      const client = engine!.temporalClient;
      const runs: { runId: string; status: string; events: number }[] = [];
      for await (const info of client.workflow.list({ query: `WorkflowId = "${done.lock_key}"` })) {
        const history = await client.workflow.getHandle(done.lock_key, info.runId).fetchHistory();
        runs.push({ runId: info.runId, status: info.status.name, events: history.events?.length ?? 0 });
      }
      const total = runs.reduce((a, r) => a + r.events, 0);
      console.log(`continue-as-new: ${runs.length} runs, history events per run ${runs.map((r) => r.events).join(', ')}, ${Math.round((total / FILES) * 1000)} events per 1,000 files`);
      // 2,000 files are 32 batches: one history would exceed the threshold several times over.
      expect(runs.length).toBeGreaterThanOrEqual(2);
      expect(runs.filter((r) => r.status === 'CONTINUED_AS_NEW')).toHaveLength(runs.length - 1);
      expect(runs.some((r) => r.runId === done.job_id)).toBe(true);
      // A run hands over at the first batch boundary after the suggestion: one batch's events past 200.
      for (const r of runs) expect(r.events).toBeLessThanOrEqual(230);
    } finally {
      worker.shutdown();
      await running;
      await engine?.close();
      await stores.dropRedis();
      await stores.close();
      await server.stop();
    }
  });
});
