/**
 * Jobs: the Temporal path against the in-process runner on the same input, in three modes.
 *
 * Default: a seeded tree of small files (one short chunk each, so orchestration and storage
 * weigh as much as they can against embedding) is mined into a fresh palace: by the embedded
 * profile's local runner, then as a Temporal workflow with 1 and with 2 workers polling the task
 * queue (workers in this process, one shared embedder; Redis leases and job store, SQLite
 * drawers). Reports files/s, the overhead of the Temporal path over the local runner, and
 * workflow history events (all runs of the continue-as-new chain) per 1,000 files.
 *
 * `--processes`: a generated project (tests/fixtures/generate-project.ts: code and notes of one
 * to several chunks, so embedding dominates) mined by the local runner, then by 1 and by 2 worker
 * processes (each its own embedder with one onnxruntime thread, `MEMPALACE_EMBED_THREADS=1`, two
 * activity slots); the mine's window is the engine's default (the polling workers' slots).
 * The local runner mines once, as the drawer-id reference; the two Temporal rows alternate over
 * `--runs` rounds; medians, the 2-worker/1-worker speed-up, peak RSS per worker process; every
 * Temporal run must file exactly the local run's drawer ids.
 *
 * `--corpus DIR --kill-midway`: DIR (e.g. the checkout's node_modules) mined by 2 worker
 * processes, one killed with SIGKILL once half the files are seen and a third started in its
 * place (as a supervisor restarts a crashed worker); the mine must complete with
 * no drawer lost or twice (drawers per file equal each file's recorded drawer count, their sum
 * the exact drawers_written, the files the exact files_mined). Files/s, drawers/s, peak RSS per
 * process. `--compare-local` also mines DIR with the local runner and compares drawer ids;
 * `--limit N` mines only the first N files of the scan (the mine's `limit`).
 *
 * Needs the local engines (deploy/local/up.sh temporal redis) and the model.
 *
 *   npx tsx bench/temporal.bench.ts            # 2000 files
 *   npx tsx bench/temporal.bench.ts 5000
 *   npx tsx bench/temporal.bench.ts 5000 --processes --runs 3
 *   npx tsx bench/temporal.bench.ts --corpus node_modules --kill-midway
 */
import type { ChildProcess } from 'node:child_process';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import { openRuntime } from '../app/runtime.js';
import { loadConfig } from '../app/config.js';
import { MiniLmEmbedder } from '../embed/minilm.js';
import type { JobProgress } from '../jobs/job.js';
import type { DrawerStore } from '../stores/ports/palace-stores.js';
import { workflowsPath } from '../jobs/engines/temporal/worker.js';
import type { JobWorker } from '../jobs/engines/temporal/worker.js';
import { generateProject } from '../tests/fixtures/generate-project.js';
import type { ClusterTestStores } from '../tests/integration/temporal-harness.js';
import { drawerIds, generateSmallFiles, inProcessWorker, mineSpec, openClusterTestStores, openEngine, spawnWorker,
  uniquePalaceName } from '../tests/integration/temporal-harness.js';
import { exited } from '../tests/helpers/processes.js';
import { machine, median, peakRssMb } from './lib/stats.js';

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(name);
const option = (name: string) => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};

const FILES = Number(args.find((a) => /^\d+$/.test(a)) ?? 2000);

if (option('--corpus')) await killMidway(path.resolve(option('--corpus')!), flag('--compare-local'), Number(option('--limit') ?? 0));
else if (flag('--processes')) await workerProcesses(FILES, Number(option('--runs') ?? 3));
else await inProcessWorkers();

async function inProcessWorkers(): Promise<void> {
  interface Row {
    path: string;
    seconds: number;
    filesPerS: number;
    events?: number;
    runs?: number;
  }

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
}

/** Peak resident set size of a live process (VmHWM), in MiB. */
function processPeakRssMb(pid: number | undefined): number {
  const status = pid === undefined ? '' : fsSync.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
  return kb === undefined ? Number.NaN : Number(kb) / 1024;
}

/** Fields of /proc/PID/stat after the command name (field 3 onwards), or undefined once the process is gone. */
function procStat(pid: number): string[] | undefined {
  try {
    const stat = fsSync.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** CPU time (user + system, every thread) a live process has used so far, in seconds (Linux clock ticks of 1/100 s). */
function processCpuSeconds(pid: number | undefined): number {
  const fields = pid === undefined ? undefined : procStat(pid);
  return fields === undefined ? 0 : (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds of the processes whose pids stand in these files, and of all their descendants. */
function processTreesCpuSeconds(pidFiles: readonly string[]): number {
  const roots = new Set(pidFiles.flatMap((f) => (fsSync.existsSync(f) ? [Number(fsSync.readFileSync(f, 'utf8').trim())] : [])));
  const processes = new Map<number, { parent: number; cpu: number }>();
  for (const name of fsSync.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const fields = procStat(Number(name));
    if (fields) processes.set(Number(name), { parent: Number(fields[1]), cpu: (Number(fields[11]) + Number(fields[12])) / 100 });
  }
  let seconds = 0;
  for (const [pid, { cpu }] of processes) {
    for (let p: number | undefined = pid; p !== undefined && p > 1; p = processes.get(p)?.parent) {
      if (roots.has(p)) {
        seconds += cpu;
        break;
      }
    }
  }
  return seconds;
}

/** The pid files deploy/local/up.sh writes for the engines this bench uses. */
function enginePidFiles(): string[] {
  return ['temporal', 'redis'].map((e) => path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '.engines', e, `${e}.pid`));
}

/** The machine's busy and stolen CPU seconds so far, over all cores (/proc/stat, ticks of 1/100 s). */
function machineCpuSeconds(): { busy: number; steal: number } {
  const [user, nice, system, , , irq, softirq, steal] = fsSync.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(
    Number,
  ) as number[];
  return { busy: (user! + nice! + system! + irq! + softirq!) / 100, steal: steal! / 100 };
}

/** Worker processes as `mempalace worker` runs them: one onnxruntime thread, two activity slots. */
async function spawnWorkers(stores: ClusterTestStores, taskQueue: string, n: number): Promise<ChildProcess[]> {
  const workers: ChildProcess[] = [];
  for (let i = 0; i < n; i++)
    workers.push(await spawnWorker(stores.palaceDir, stores.palaceName, taskQueue, { MEMPALACE_EMBED_THREADS: '1', WORKER_MAX_ACTIVITIES: '2' }));
  // Let every worker's pollers reach the server, so the mine's default window counts them all.
  await new Promise((r) => setTimeout(r, 3_000));
  return workers;
}

async function stopWorkers(workers: ChildProcess[]): Promise<void> {
  for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGTERM');
  await Promise.all(workers.map(exited));
}

async function mineWith(stores: ClusterTestStores, taskQueue: string, source: string, wing: string, midway?: (p: JobProgress) => boolean,
  limit = 0): Promise<{ done: JobProgress; seconds: number }> {
  const engine = await openEngine(stores, taskQueue);
  try {
    const t = performance.now();
    const started = await engine.start(mineSpec(source, wing, { limit }));
    if (midway) {
      for (;;) {
        const p = await engine.progress(started.job_id);
        if (p.state !== 'running' || midway(p)) break;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    const done = await engine.wait(started.job_id, 6 * 3_600_000);
    const seconds = (performance.now() - t) / 1000;
    if (done.state !== 'completed') throw new Error(`temporal mine ${done.state}: ${done.error}`);
    return { done, seconds };
  } finally {
    await engine.close();
  }
}

async function localMine(palace: string, source: string, wing: string, embedder: MiniLmEmbedder,
  limit = 0): Promise<{ ids: string[]; seconds: number; done: JobProgress }> {
  const rt = await openRuntime(loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: palace }), { embedder });
  try {
    const t = performance.now();
    const started = await rt.jobs.start(mineSpec(source, wing, { limit }));
    const done = await rt.jobs.wait(started.job_id, 6 * 3_600_000);
    const seconds = (performance.now() - t) / 1000;
    if (done.state !== 'completed') throw new Error(`local mine ${done.state}: ${done.error}`);
    return { ids: await drawerIds(rt.stores.drawers, wing), seconds, done };
  } finally {
    await rt.close();
  }
}

async function workerProcesses(files: number, runs: number): Promise<void> {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mempalace-workers-bench-'));
  const source = path.join(tmp, 'source');
  await generateProject(source, files, 77);
  // One onnxruntime thread, as each worker process has: the local row is then one worker's work in-process.
  const config = loadConfig({ ...process.env, MEMPALACE_EMBED_THREADS: '1' });
  const embedder = new MiniLmEmbedder(config);
  await embedder.embed(['warm up the model before timing']);
  const labels = ['local runner (in-process, 1 thread)', 'Temporal, 1 worker process', 'Temporal, 2 worker processes'];
  const seconds: number[][] = labels.map(() => []);
  const rss: number[][] = labels.map(() => []);
  // Cores kept busy (CPU seconds over the wall time): the mining processes; and, for the Temporal
  // rows, the engines (Temporal server, Redis), this client process, the whole machine, and the
  // time the hypervisor stole from this machine's cores.
  const cores: number[][] = labels.map(() => []);
  const split = { engines: [[], [], []], client: [[], [], []], machine: [[], [], []], steal: [[], [], []] } as Record<
    'engines' | 'client' | 'machine' | 'steal',
    number[][]
  >;
  let drawers = 0;
  try {
    let expected: string[] | undefined;
    for (let round = 0; round < runs; round++) {
      if (expected === undefined) {
        const cpu = process.cpuUsage();
        const local = await localMine(path.join(tmp, 'palace-local'), source, 'bench', embedder);
        const used = process.cpuUsage(cpu);
        cores[0]!.push((used.user + used.system) / 1e6 / local.seconds);
        expected = local.ids;
        drawers = local.done.drawers_written;
        seconds[0]!.push(local.seconds);
        rss[0]!.push(peakRssMb());
        await fs.rm(path.join(tmp, 'palace-local'), { recursive: true, force: true });
      }
      for (const n of [1, 2]) {
        const name = uniquePalaceName(`procs${n}`);
        const stores = await openClusterTestStores(path.join(tmp, `palace-${name}`), name);
        const taskQueue = `tq-${name}`;
        const workers = await spawnWorkers(stores, taskQueue, n);
        try {
          const cpuBefore = workers.map((w) => processCpuSeconds(w.pid));
          const enginesBefore = processTreesCpuSeconds(enginePidFiles());
          const machineBefore = machineCpuSeconds();
          const clientBefore = process.cpuUsage();
          const run = await mineWith(stores, taskQueue, source, 'bench');
          const client = process.cpuUsage(clientBefore);
          const machineAfter = machineCpuSeconds();
          split.engines[n]!.push((processTreesCpuSeconds(enginePidFiles()) - enginesBefore) / run.seconds);
          split.client[n]!.push((client.user + client.system) / 1e6 / run.seconds);
          split.machine[n]!.push((machineAfter.busy - machineBefore.busy) / run.seconds);
          split.steal[n]!.push((machineAfter.steal - machineBefore.steal) / run.seconds);
          const cpu = workers.reduce((sum, w, i) => sum + processCpuSeconds(w.pid) - cpuBefore[i]!, 0);
          cores[n]!.push(cpu / run.seconds);
          seconds[n]!.push(run.seconds);
          rss[n]!.push(Math.max(...workers.map((w) => processPeakRssMb(w.pid))));
          if (JSON.stringify(await drawerIds(stores.drawers, 'bench')) !== JSON.stringify(expected))
            throw new Error(`Temporal (${n} worker processes) filed different drawers than the local runner`);
        } finally {
          await stopWorkers(workers);
          await stores.dropRedis();
          await stores.close();
          await fs.rm(stores.palaceDir, { recursive: true, force: true });
        }
      }
      console.log(
        `round ${round + 1}/${runs}: ${labels.map((l, i) => `${l} ${seconds[i]!.at(-1)!.toFixed(1)} s (${cores[i]!.at(-1)!.toFixed(2)} cores)`).join(', ')}`,
      );
    }
    const med = seconds.map((s) => median(s));
    console.log(
      `\n${files} generated project files (${drawers} drawers), model ${config.embed.model}, the local runner once and the Temporal rows over ${runs} rounds (medians), ${machine()}, load average ${
        os.loadavg().map((l) => l.toFixed(1)).join(' / ')
      } at the end`,
    );
    console.log('(worker processes: MEMPALACE_EMBED_THREADS=1, i.e. one onnxruntime thread each; 2 activity slots; window = the slots polling)\n');
    console.log('| path | wall time, s (median) | runs, s | files/s | drawers/s | vs 1 worker | cores busy (CPU s / wall s) | peak RSS per process, MiB |');
    console.log('|---|---|---|---|---|---|---|---|');
    labels.forEach((label, i) => {
      const vs = i === 0 ? '—' : `${(med[1]! / med[i]!).toFixed(2)}×`;
      console.log(
        `| ${label} | ${med[i]!.toFixed(1)} | ${seconds[i]!.map((x) => x.toFixed(1)).join(', ')} | ${(files / med[i]!).toFixed(1)} | ${
          (drawers / med[i]!).toFixed(1)
        } | ${vs} | ${median(cores[i]!).toFixed(2)} | ${Math.round(median(rss[i]!))} |`,
      );
    });
    console.log('\nWhere the two cores went during the Temporal rows (cores busy = CPU seconds over wall seconds, medians; per round in brackets):\n');
    console.log('| path | mining processes | engines (Temporal, Redis) | this client | whole machine | stolen by the hypervisor |');
    console.log('|---|---|---|---|---|---|');
    const cell = (xs: number[]) => `${median(xs).toFixed(2)} (${xs.map((x) => x.toFixed(2)).join(', ')})`;
    for (const n of [1, 2])
      console.log(
        `| ${labels[n]} | ${cell(cores[n]!)} | ${cell(split.engines[n]!)} | ${cell(split.client[n]!)} | ${cell(split.machine[n]!)} | ${
          cell(split.steal[n]!)
        } |`,
      );
  } finally {
    await embedder.close();
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

/** Files and bytes under `dir` that a projects-mode scan could mine (every regular file). */
async function corpusSize(dir: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  const walk = async (d: string) => {
    for (const e of await fs.readdir(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) {
        files++;
        bytes += (await fs.stat(p)).size;
      }
    }
  };
  await walk(dir);
  return { files, bytes };
}

/** Drawers per source file against each file's recorded count: lost or doubled drawers show here. */
async function checkDrawers(drawers: DrawerStore, wing: string, done: JobProgress): Promise<{ drawers: number; files: number }> {
  const perFile = new Map<string, number>();
  const ids = new Set<string>();
  for (let offset = 0;; offset += 5000) {
    const page = await drawers.list({ wing }, offset, 5000);
    for (const d of page.items) {
      ids.add(d.id);
      const f = String(d.meta.source_file);
      perFile.set(f, (perFile.get(f) ?? 0) + 1);
    }
    if (offset + 5000 >= page.total) break;
  }
  const files = [...perFile.keys()];
  for (let i = 0; i < files.length; i += 1000) {
    const states = await drawers.fileStates(wing, files.slice(i, i + 1000));
    for (const f of files.slice(i, i + 1000)) {
      if (states.get(f)?.drawer_count !== perFile.get(f)) throw new Error(`${f}: ${perFile.get(f)} drawers, its state records ${states.get(f)?.drawer_count}`);
    }
  }
  const total = await drawers.count({ wing });
  if (ids.size !== total) throw new Error(`${total} drawers but ${ids.size} distinct ids`);
  if (total !== done.drawers_written) throw new Error(`${total} drawers stored, the job counted ${done.drawers_written}`);
  if (files.length !== done.files_mined) throw new Error(`${files.length} files have drawers, the job counted ${done.files_mined} mined`);
  return { drawers: total, files: files.length };
}

async function killMidway(corpus: string, compareLocal: boolean, limit: number): Promise<void> {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mempalace-corpus-bench-'));
  const size = await corpusSize(corpus);
  const name = uniquePalaceName('corpus');
  const stores = await openClusterTestStores(path.join(tmp, 'palace'), name);
  const taskQueue = `tq-${name}`;
  const workers = await spawnWorkers(stores, taskQueue, 2);
  let killedRss = Number.NaN;
  let killedAt = 0;
  let replacement: Promise<ChildProcess[]> | undefined;
  try {
    const run = await mineWith(stores, taskQueue, corpus, 'corpus', (p) => {
      if (p.files_total === 0 || p.files_seen < p.files_total / 2) return false;
      killedRss = processPeakRssMb(workers[0]!.pid);
      killedAt = p.files_seen;
      workers[0]!.kill('SIGKILL');
      // A supervisor restarts the killed worker, as systemd or Kubernetes would.
      replacement = spawnWorkers(stores, taskQueue, 1);
      return true;
    }, limit);
    workers.push(...(await replacement ?? []));
    const survivorRss = processPeakRssMb(workers[1]!.pid);
    const replacementRss = processPeakRssMb(workers[2]?.pid);
    const checked = await checkDrawers(stores.drawers, 'corpus', run.done);
    const d = run.done;
    console.log(
      `\n${corpus}: ${size.files} files, ${(size.bytes / 2 ** 20).toFixed(1)} MiB in files; the scan kept ${d.files_total}${
        limit > 0 ? ` (--limit ${limit})` : ''
      }; ${machine()}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' / ')} at the end`,
    );
    console.log(`model ${loadConfig().embed.model}; worker 1 killed with SIGKILL at ${killedAt}/${d.files_total} files seen, worker 3 started in its place\n`);
    console.log(
      '| files seen | mined | skipped | errors | drawers | wall time, s | files/s | drawers/s | peak RSS worker 1 (at kill) / worker 2 / worker 3 / client, MiB |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|');
    console.log(
      `| ${d.files_seen} | ${d.files_mined} | ${d.files_skipped} | ${d.errors} | ${checked.drawers} | ${run.seconds.toFixed(1)} | ${
        (d.files_seen / run.seconds).toFixed(1)
      } | ${(checked.drawers / run.seconds).toFixed(1)} | ${Math.round(killedRss)} / ${Math.round(survivorRss)} / ${Math.round(replacementRss)} / ${
        Math.round(peakRssMb())
      } |`,
    );
    console.log("\nno drawer lost or doubled: drawers per file = each file's recorded count; total = drawers_written; files with drawers = files_mined");
    if (compareLocal) {
      const embedder = new MiniLmEmbedder(loadConfig());
      try {
        const local = await localMine(path.join(tmp, 'palace-local'), corpus, 'corpus', embedder, limit);
        const same = JSON.stringify(local.ids) === JSON.stringify(await drawerIds(stores.drawers, 'corpus'));
        console.log(`local runner: ${local.seconds.toFixed(1)} s, ${local.ids.length} drawers, ids ${same ? 'identical' : 'DIFFERENT'}`);
        if (!same) throw new Error('the killed cluster mine filed different drawers than the local runner');
      } finally {
        await embedder.close();
      }
    }
  } finally {
    await stopWorkers(workers);
    await stores.dropRedis();
    await stores.close();
    await fs.rm(tmp, { recursive: true, force: true });
  }
}
