/**
 * Throughput of the MiniLM embedder: texts per second at call sizes 1, 16 and 64, for short
 * sentences and for drawer-sized chunks, with 1 and 2 onnxruntime intra-op threads; median of
 * several runs. Each configuration runs in its own child process, so the peak RSS reported is that
 * configuration's. Needs the model (`npm run model:fetch`).
 *
 *   npx tsx bench/embedder.bench.ts            # prints a Markdown table for bench/README.md
 */
import { fork } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../core/config.js';
import { MiniLmEmbedder } from '../embed/minilm.js';

const RUNS = 5;
const CALL_SIZES = [1, 16, 64];
const THREAD_COUNTS = [1, 2];

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

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function textsPerSecond(embedder: MiniLmEmbedder, texts: string[], callSize: number): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < texts.length; i += callSize) await embedder.embed(texts.slice(i, i + callSize));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return texts.length / seconds;
}

interface Measurement {
  threads: number;
  callSize: number;
  textsPerSecond: number[];
  loadMs: number;
  peakRssMb: number;
}

/** One configuration, in a fresh process so its peak RSS is its own. */
async function measure(threads: number, callSize: number): Promise<Measurement> {
  const config = loadConfig();
  const loadStart = performance.now();
  const embedder = new MiniLmEmbedder(config, { intraOpNumThreads: threads, batchSize: callSize });
  await embedder.embed(['warm up']);
  const loadMs = performance.now() - loadStart;
  const medians: number[] = [];
  for (const workload of WORKLOADS) {
    await embedder.embed(workload.texts.slice(0, callSize));
    const samples: number[] = [];
    for (let run = 0; run < RUNS; run += 1) samples.push(await textsPerSecond(embedder, workload.texts, callSize));
    medians.push(median(samples));
  }
  await embedder.close();
  return { threads, callSize, textsPerSecond: medians, loadMs, peakRssMb: process.resourceUsage().maxRSS / 1024 };
}

function runChild(threads: number, callSize: number): Promise<Measurement> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), [String(threads), String(callSize)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('message', (message) => resolve(message as Measurement));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`benchmark child exited with ${code}`));
    });
  });
}

async function main(): Promise<void> {
  const [threadsArg, callSizeArg] = process.argv.slice(2);
  if (threadsArg !== undefined && callSizeArg !== undefined) {
    process.send?.(await measure(Number(threadsArg), Number(callSizeArg)));
    return;
  }
  const loadBefore = os.loadavg()[0]!;
  const results: Measurement[] = [];
  for (const threads of THREAD_COUNTS) {
    for (const callSize of CALL_SIZES) {
      const result = await runChild(threads, callSize);
      results.push(result);
      console.error(`threads ${threads}, call size ${callSize}: ${result.textsPerSecond.map((v) => v.toFixed(1)).join(', ')} texts/s, peak RSS ${result.peakRssMb.toFixed(0)} MB`);
    }
  }
  const loadAfter = os.loadavg()[0]!;
  console.log(
    `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}; median of ${RUNS} runs; ` +
      `1-minute load average ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after.\n`,
  );
  console.log(`| intra-op threads | texts per call (= batch) | ${WORKLOADS.map((w) => `${w.name}, texts/s`).join(' | ')} | load + first embed, ms | peak RSS, MB |`);
  console.log(`|---|---|${WORKLOADS.map(() => '---').join('|')}|---|---|`);
  for (const r of results) {
    console.log(`| ${r.threads} | ${r.callSize} | ${r.textsPerSecond.map((v) => v.toFixed(1)).join(' | ')} | ${r.loadMs.toFixed(0)} | ${r.peakRssMb.toFixed(0)} |`);
  }
}

await main();
