/**
 * The MiniLM embedder, before and after moving inference off the main thread, side by side:
 *
 * - `inline`: MiniLmModel on the calling thread, which is what MiniLmEmbedder did before it had a
 *   worker (onnxruntime-node runs `session.run` synchronously, so the event loop stops per batch);
 * - `worker`: MiniLmEmbedder, which runs the same model code in a worker thread.
 *
 * Event-loop lag: one embed() of 500 chunk-sized texts at the default batch size while a 10 ms
 * interval timer records how late each tick fires; each mode in its own child process, so the peak
 * RSS is its own. Throughput: texts per second and CPU time per text (all threads of the process)
 * at call sizes 1, 16 and 64 (one call = one batch), for short sentences and for drawer-sized
 * chunks; one child process per call size holds both modes and alternates their runs, so a change
 * in the load of a shared machine hits both alike; median of several runs. Needs the model
 * (`npm run model:fetch`).
 *
 *   npx tsx bench/embedder.bench.ts [threads]   # intra-op threads, default 1; prints Markdown tables
 */
import { fork } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../app/config.js';
import { EmbedQueue } from '../embed/embed-queue.js';
import type { EmbedReply } from '../embed/embed-queue.js';
import { MiniLmEmbedder } from '../embed/minilm.js';
import { MiniLmModel } from '../embed/minilm-model.js';
import { locateMiniLmModel, MINILM_VARIANTS } from '../embed/model-locator.js';

const RUNS = 5;
const CALL_SIZES = [1, 16, 64];
const MODES = ['inline', 'worker'] as const;
type Mode = (typeof MODES)[number];
const LAG_TEXTS = 500;
const LAG_BATCH_SIZE = 32;
const TICK_MS = 10;

const WORDS = (
  'the palace keeps every drawer verbatim while agents search rooms by meaning and the graph links ' +
  'entities across wings so a mined repository becomes memory that a team can query diary entries ' +
  'record decisions tunnels join rooms hallways carry facts workflows resume after a crash'
).split(' ');

/** Deterministic pseudo-text: `count` texts of `minWords`..`maxWords` words. */
function makeTexts(count: number, minWords: number, maxWords: number, seed: number): string[] {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  return Array.from({ length: count }, () => {
    const length = minWords + Math.floor(next() * (maxWords - minWords + 1));
    return Array.from({ length }, () => WORDS[Math.floor(next() * WORDS.length)]!).join(' ') + '.';
  });
}

const WORKLOADS = [
  { name: 'sentence (8–24 words)', texts: makeTexts(192, 8, 24, 7) },
  { name: 'chunk (150–200 words)', texts: makeTexts(64, 150, 200, 11) },
];

/** What both modes offer: embed with a given batch size, then release the model. */
interface Runner {
  embed(texts: string[]): Promise<Float32Array[]>;
  close(): Promise<void>;
}

async function openRunner(mode: Mode, threads: number, batchSize: number): Promise<Runner> {
  const config = loadConfig();
  if (mode === 'worker') return new MiniLmEmbedder(config, { intraOpNumThreads: threads, batchSize });
  // Inline: the worker's queue and model on this thread.
  const model = await MiniLmModel.load(locateMiniLmModel(config), MINILM_VARIANTS[0]!, threads);
  const answers = new Map<number, (reply: EmbedReply) => void>();
  const queue = new EmbedQueue(Promise.resolve(model), (reply) => answers.get(reply.id)!(reply));
  let nextId = 0;
  const embed = (texts: string[]) =>
    new Promise<Float32Array[]>((resolve, reject) => {
      const id = nextId++;
      answers.set(id, (reply) => ('vectors' in reply ? resolve(reply.vectors) : reject(reply.error)));
      queue.push(id, texts, batchSize);
    });
  return { embed, close: () => model.release() };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
}

interface Sample {
  textsPerSecond: number;
  cpuMsPerText: number;
}

/** Wall-clock rate and CPU time of the whole process (all threads, so the worker's too) per text. */
async function sample(runner: Runner, texts: string[], callSize: number): Promise<Sample> {
  const cpuStart = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (let i = 0; i < texts.length; i += callSize) await runner.embed(texts.slice(i, i + callSize));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const cpu = process.cpuUsage(cpuStart);
  return { textsPerSecond: texts.length / seconds, cpuMsPerText: (cpu.user + cpu.system) / 1000 / texts.length };
}

interface Throughput {
  kind: 'throughput';
  callSize: number;
  /** Per mode, per workload: median texts/s and median CPU ms per text. */
  results: Record<Mode, { textsPerSecond: number; cpuMsPerText: number }[]>;
}

interface Lag {
  kind: 'lag';
  mode: Mode;
  seconds: number;
  ticks: number;
  maxLagMs: number;
  p99LagMs: number;
  peakRssMb: number;
}

/** Both modes in one process, their runs alternating, so a change in machine load hits both alike. */
async function measureThroughput(threads: number, callSize: number): Promise<Throughput> {
  const runners = { inline: await openRunner('inline', threads, callSize), worker: await openRunner('worker', threads, callSize) };
  const results: Throughput['results'] = { inline: [], worker: [] };
  for (const workload of WORKLOADS) {
    const samples: Record<Mode, Sample[]> = { inline: [], worker: [] };
    for (const mode of MODES) await runners[mode].embed(workload.texts.slice(0, callSize));
    for (let run = 0; run < RUNS; run += 1) {
      for (const mode of MODES) samples[mode].push(await sample(runners[mode], workload.texts, callSize));
    }
    for (const mode of MODES) {
      results[mode].push({
        textsPerSecond: median(samples[mode].map((s) => s.textsPerSecond)),
        cpuMsPerText: median(samples[mode].map((s) => s.cpuMsPerText)),
      });
    }
  }
  for (const mode of MODES) await runners[mode].close();
  return { kind: 'throughput', callSize, results };
}

/** How late a 10 ms interval fires while one embed() of LAG_TEXTS chunks runs. */
async function measureLag(mode: Mode, threads: number): Promise<Lag> {
  const texts = makeTexts(LAG_TEXTS, 150, 200, 13);
  const runner = await openRunner(mode, threads, LAG_BATCH_SIZE);
  await runner.embed(['warm up']);
  const lags: number[] = [];
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    lags.push(Math.max(0, now - last - TICK_MS));
    last = now;
  }, TICK_MS);
  const start = performance.now();
  await runner.embed(texts);
  const seconds = (performance.now() - start) / 1000;
  clearInterval(timer);
  await runner.close();
  lags.sort((a, b) => a - b);
  return { kind: 'lag', mode, seconds, ticks: lags.length, maxLagMs: lags.at(-1) ?? 0, p99LagMs: percentile(lags, 0.99),
    peakRssMb: process.resourceUsage().maxRSS / 1024 };
}

function runChild<T>(args: string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('message', (message) => resolve(message as T));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`benchmark child ${args.join(' ')} exited with ${code}`));
    });
  });
}

async function main(): Promise<void> {
  const [first, ...rest] = process.argv.slice(2);
  if (first === '--child') {
    const [kind, threads, modeOrCallSize] = rest as [string, string, string];
    process.send?.(
      kind === 'lag' ? await measureLag(modeOrCallSize as Mode, Number(threads)) : await measureThroughput(Number(threads), Number(modeOrCallSize)),
    );
    return;
  }
  const threads = first === undefined ? 1 : Number(first);
  const loadBefore = os.loadavg()[0]!;
  const lags: Lag[] = [];
  for (const mode of MODES) {
    const lag = await runChild<Lag>(['--child', 'lag', String(threads), mode]);
    lags.push(lag);
    console.error(`lag ${mode}: max ${lag.maxLagMs.toFixed(0)} ms, p99 ${lag.p99LagMs.toFixed(0)} ms, ${(LAG_TEXTS / lag.seconds).toFixed(1)} texts/s`);
  }
  const throughputs: Throughput[] = [];
  for (const callSize of CALL_SIZES) {
    const result = await runChild<Throughput>(['--child', 'throughput', String(threads), String(callSize)]);
    throughputs.push(result);
    for (const mode of MODES) {
      console.error(
        `${mode}, call size ${callSize}: ${
          result.results[mode].map((r) => `${r.textsPerSecond.toFixed(1)} texts/s, ${r.cpuMsPerText.toFixed(1)} CPU ms/text`).join('; ')
        }`,
      );
    }
  }
  const loadAfter = os.loadavg()[0]!;
  console.log(
    `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}; ${threads} intra-op thread(s); ` +
      `throughput median of ${RUNS} runs; 1-minute load average ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after.\n`,
  );
  console.log(`Event-loop lag during one embed() of ${LAG_TEXTS} chunks (batch ${LAG_BATCH_SIZE}), ${TICK_MS} ms interval timer:\n`);
  console.log('| mode | max lag, ms | p99 lag, ms | timer ticks | texts/s | peak RSS, MB |');
  console.log('|---|---|---|---|---|---|');
  for (const l of lags) {
    console.log(
      `| ${l.mode} | ${l.maxLagMs.toFixed(0)} | ${l.p99LagMs.toFixed(0)} | ${l.ticks} | ${(LAG_TEXTS / l.seconds).toFixed(1)} | ${l.peakRssMb.toFixed(0)} |`,
    );
  }
  console.log(`\n| texts per call (= batch) | mode | ${WORKLOADS.map((w) => `${w.name}: texts/s | CPU ms/text`).join(' | ')} |`);
  console.log(`|---|---|${WORKLOADS.map(() => '---|---').join('|')}|`);
  for (const t of throughputs) {
    for (const mode of MODES) {
      console.log(`| ${t.callSize} | ${mode} | ${t.results[mode].map((r) => `${r.textsPerSecond.toFixed(1)} | ${r.cpuMsPerText.toFixed(1)}`).join(' | ')} |`);
    }
  }
}

await main();
