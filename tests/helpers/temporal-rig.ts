/**
 * The setting of a Temporal test, built and torn down in one place: cluster test stores
 * under a unique palace name, a Temporal engine on the palace's own task queue, the workers that
 * serve it (in this process, or worker processes the test may kill) and, where a test needs
 * server settings of its own, a private dev server instead of the shared one. Whatever the body
 * does or throws, every worker is stopped (a process still running is killed), then the engine is
 * closed, the palace's Redis keys dropped, the stores closed and the private server stopped.
 * withTemporalRig holds one for a test's body; openTemporalRig one for a file's tests.
 */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Embedder } from '../../embed/embedder.js';
import type { JobEngine, JobProgress, JobSpec } from '../../jobs/job.js';
import type { ClusterTestStores } from '../integration/temporal-harness.js';
import { inProcessWorker, openClusterTestStores, openEngine, spawnWorker, startOwnDevServer, uniquePalaceName } from '../integration/temporal-harness.js';
import { exited } from './processes.js';

type Engine = Awaited<ReturnType<typeof openEngine>>;
type Timeouts = Parameters<typeof openEngine>[2];
type WorkerOptions = NonNullable<Parameters<typeof inProcessWorker>[3]>;

/** `stores`: what the worker's activities use instead of the rig's (a wrapper around one of them, say). */
type RunWorkerOptions = Omit<WorkerOptions, 'address'> & { stores?: ClusterTestStores };

export interface TemporalRigOptions {
  /** The test's temporary directory; the palace lives in `palace-<label>` under it. */
  dir: string;
  label: string;
  timeouts?: Timeouts;
  /** The engine's mine window; 0 or absent: the activity slots of the workers polling. */
  mineWindow?: number;
  /** Dynamic config (`key=value`) for a dev server of this test's own, never the shared one. */
  ownDevServer?: string[];
}

export interface TemporalRig {
  stores: ClusterTestStores;
  engine: Engine;
  /** A worker in this process on the rig's task queue, running until teardown. */
  runWorker(embedder: Embedder, options?: RunWorkerOptions): Promise<void>;
  /** A worker process on the rig's task queue, ready once it polls; killed at teardown if still running. */
  spawnWorker(extraEnv?: Record<string, string>): Promise<ChildProcess>;
}

/** A rig open across a test file's tests (beforeAll to afterAll); `close()` is the teardown. */
export interface OpenTemporalRig extends TemporalRig {
  close(): Promise<void>;
}

export async function openTemporalRig(options: TemporalRigOptions): Promise<OpenTemporalRig> {
  const name = uniquePalaceName(options.label);
  const taskQueue = `tq-${name}`;
  const palaceDir = path.join(options.dir, `palace-${options.label}`);
  // Teardown steps in the reverse order of what was set up, so a setup that fails midway still undoes its first steps.
  const teardown: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const step of teardown.splice(0)) await step();
  };
  try {
    const server = options.ownDevServer ? await startOwnDevServer(options.ownDevServer) : undefined;
    if (server) teardown.unshift(() => server.stop());
    const stores = await openClusterTestStores(palaceDir, name);
    teardown.unshift(async () => {
      await stores.dropRedis();
      await stores.close();
    });
    const engine = await openEngine(stores, taskQueue, options.timeouts, server?.address, options.mineWindow);
    teardown.unshift(() => engine.close());
    const runWorker = async (embedder: Embedder, workerOptions: RunWorkerOptions = {}) => {
      const { stores: workerStores = stores, ...rest } = workerOptions;
      const worker = await inProcessWorker(workerStores, embedder, taskQueue, server ? { ...rest, address: server.address } : rest);
      const running = worker.run();
      teardown.unshift(async () => {
        worker.shutdown();
        await running;
      });
    };
    const children: ChildProcess[] = [];
    teardown.unshift(async () => {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      await Promise.all(children.map(exited));
    });
    const spawnRigWorker = async (extraEnv: Record<string, string> = {}) => {
      const child = await spawnWorker(palaceDir, name, taskQueue, server ? { ...extraEnv, TEMPORAL_ADDRESS: server.address } : extraEnv);
      children.push(child);
      return child;
    };
    return { stores, engine, runWorker, spawnWorker: spawnRigWorker, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** A rig for one test: open, the body, then the teardown whatever the body does or throws. */
export async function withTemporalRig(options: TemporalRigOptions, body: (rig: TemporalRig) => Promise<void>): Promise<void> {
  const rig = await openTemporalRig(options);
  try {
    await body(rig);
  } finally {
    await rig.close();
  }
}

/** Starts a job and waits for its end. */
export async function runJob(engine: Pick<JobEngine, 'start' | 'wait'>, spec: JobSpec, timeoutMs = 300_000): Promise<JobProgress> {
  const started = await engine.start(spec);
  return engine.wait(started.job_id, timeoutMs);
}

/** Polls until the running job has seen `atLeast` files; fails if it ends first. Returns the files seen. */
export async function waitForFilesSeen(engine: Pick<Engine, 'progress'>, jobId: string, atLeast: number): Promise<number> {
  for (;;) {
    const p = await engine.progress(jobId);
    if (p.state !== 'running') throw new Error(`job ended (${p.state}) before ${atLeast} files were seen`);
    if (p.files_seen >= atLeast) return p.files_seen;
    await new Promise((r) => setTimeout(r, 100));
  }
}
