/**
 * The MiniLM embedder, before and after moving inference off the main thread, side by side:
 *
 * - `inline`: MiniLmModel on the calling thread, which is what MiniLmEmbedder did before it had a
 *   worker (onnxruntime-node runs `session.run` synchronously, so the event loop stops per batch);
 * - `worker`: MiniLmEmbedder, which runs the same model code in a worker thread.
 *
 * Throughput: texts per second at call sizes 1, 16 and 64 (one call = one batch), for short
 * sentences and for drawer-sized chunks; median of several runs. Event-loop lag: one embed() of 500
 * chunk-sized texts at the default batch size while a 10 ms interval timer records how late each
 * tick fires. Every configuration runs in its own child process, so the peak RSS is its own; the
 * two modes alternate so a change in machine load hits both. Needs the model (`npm run model:fetch`).
 *
 *   npx tsx bench/embedder.bench.ts [threads]   # intra-op threads, default 1; prints Markdown tables
 */
import { fork } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../core/config.js';
import { MiniLmEmbedder } from '../embed/minilm.js';
import { MiniLmModel } from '../embed/minilm-model.js';
import { locateMiniLmModel } from '../embed/model-locator.js';

const RUNS = 3;
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
  const model = await MiniLmModel.load(locateMiniLmModel(config), threads);
  return { embed: (texts) => model.embed(texts, batchSize), close: () => model.release() };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
}

async function textsPerSecond(runner: Runner, texts: string[], callSize: number): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < texts.length; i += callSize) await runner.embed(texts.slice(i, i + callSize));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return texts.length / seconds;
}

interface Throughput {
  kind: 'throughput';
  mode: Mode;
  callSize: number;
  textsPerSecond: number[];
  loadMs: number;
  peakRssMb: number;
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

async function measureThroughput(mode: Mode, threads: number, callSize: number): Promise<Throughput> {
  const loadStart = performance.now();
  const runner = await openRunner(mode, threads, callSize);
  await runner.embed(['warm up']);
  const loadMs = performance.now() - loadStart;
  const medians: number[] = [];
  for (const workload of WORKLOADS) {
    await runner.embed(workload.texts.slice(0, callSize));
    const samples: number[] = [];
    for (let run = 0; run < RUNS; run += 1) samples.push(await textsPerSecond(runner, workload.texts, callSize));
    medians.push(median(samples));
  }
  await runner.close();
  return { kind: 'throughput', mode, callSize, textsPerSecond: medians, loadMs, peakRssMb: process.resourceUsage().maxRSS / 1024 };
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
  return { kind: 'lag', mode, seconds, ticks: lags.length, maxLagMs: lags.at(-1) ?? 0, p99LagMs: percentile(lags, 0.99), peakRssMb: process.resourceUsage().maxRSS / 1024 };
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
    const [kind, mode, threads, callSize] = rest as [string, Mode, string, string];
    process.send?.(kind === 'lag' ? await measureLag(mode, Number(threads)) : await measureThroughput(mode, Number(threads), Number(callSize)));
    return;
  }
  const threads = first === undefined ? 1 : Number(first);
  const loadBefore = os.loadavg()[0]!;
  const lags: Lag[] = [];
  for (const mode of MODES) {
    const lag = await runChild<Lag>(['--child', 'lag', mode, String(threads)]);
    lags.push(lag);
    console.error(`lag ${mode}: max ${lag.maxLagMs.toFixed(0)} ms, p99 ${lag.p99LagMs.toFixed(0)} ms, ${(LAG_TEXTS / lag.seconds).toFixed(1)} texts/s`);
  }
  const throughputs: Throughput[] = [];
  for (const callSize of CALL_SIZES) {
    for (const mode of MODES) {
      const result = await runChild<Throughput>(['--child', 'throughput', mode, String(threads), String(callSize)]);
      throughputs.push(result);
      console.error(`${mode}, call size ${callSize}: ${result.textsPerSecond.map((v) => v.toFixed(1)).join(', ')} texts/s, peak RSS ${result.peakRssMb.toFixed(0)} MB`);
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
    console.log(`| ${l.mode} | ${l.maxLagMs.toFixed(0)} | ${l.p99LagMs.toFixed(0)} | ${l.ticks} | ${(LAG_TEXTS / l.seconds).toFixed(1)} | ${l.peakRssMb.toFixed(0)} |`);
  }
  console.log(`\n| mode | texts per call (= batch) | ${WORKLOADS.map((w) => `${w.name}, texts/s`).join(' | ')} | load + first embed, ms | peak RSS, MB |`);
  console.log(`|---|---|${WORKLOADS.map(() => '---').join('|')}|---|---|`);
  for (const r of throughputs) {
    console.log(`| ${r.mode} | ${r.callSize} | ${r.textsPerSecond.map((v) => v.toFixed(1)).join(' | ')} | ${r.loadMs.toFixed(0)} | ${r.peakRssMb.toFixed(0)} |`);
  }
}

await main();
