/**
 * How a worker should spend its cores on embedding: several onnxruntime intra-op threads in one
 * process, or several single-threaded processes (e.g. several `mempalace worker`s with
 * MEMPALACE_EMBED_THREADS=1) sharing the work. Each layout embeds the same chunk-sized texts in
 * calls of 64 (a mining batch's worth), every process a child of this one that loads its model,
 * warms up and then starts on a common signal; the wall time runs from that signal to the last
 * child's end. Layouts alternate within each run; medians over the runs.
 *
 *   npx tsx bench/embed-parallelism.bench.ts [texts] [runs] [model]   # default 384 texts, 3 runs, fp32
 */
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../app/config.js';
import { MiniLmEmbedder } from '../embed/minilm.js';
import { machine, median, seeded } from './lib/stats.js';

const CALL = 64;
const WORDS =
  'the palace keeps every drawer verbatim while agents search rooms by meaning and the graph links entities across wings so a mined repository becomes memory that a team can query'
    .split(' ');

function chunkTexts(count: number): string[] {
  const rnd = seeded(7);
  return Array.from({ length: count }, () => Array.from({ length: 120 + Math.floor(rnd() * 80) }, () => WORDS[Math.floor(rnd() * WORDS.length)]!).join(' '));
}

type ToChild = { type: 'go' };
type FromChild = { type: 'ready' } | { type: 'done'; ms: number };

async function child(): Promise<void> {
  const [threads, share, count, model] = process.argv.slice(3).map((x, i) => (i < 3 ? Number(x) : x)) as [number, number, number, string];
  const embedder = new MiniLmEmbedder(loadConfig(), { model, intraOpNumThreads: threads });
  const texts = chunkTexts(count).filter((_, i) => i % share === Number(process.env.BENCH_PART ?? 0));
  await embedder.embed(texts.slice(0, 4));
  process.send!({ type: 'ready' } satisfies FromChild);
  process.once('message', async (_message: ToChild) => {
    const started = performance.now();
    for (let i = 0; i < texts.length; i += CALL) await embedder.embed(texts.slice(i, i + CALL));
    process.send!({ type: 'done', ms: performance.now() - started } satisfies FromChild);
    await embedder.close();
    process.disconnect();
  });
}

/** Wall seconds for `processes` children of `threads` threads each to embed `count` texts between them. */
async function layout(processes: number, threads: number, count: number, model: string): Promise<number> {
  const children: ChildProcess[] = Array.from({ length: processes },
    (_, part) =>
      fork(fileURLToPath(import.meta.url), ['child', String(threads), String(processes), String(count), model], {
        env: { ...process.env, BENCH_PART: String(part) },
        execArgv: ['--import', 'tsx'],
      }));
  const next = (c: ChildProcess) =>
    new Promise<FromChild>((resolve, reject) => {
      c.once('message', (m) => resolve(m as FromChild));
      c.once('error', reject);
    });
  await Promise.all(children.map(next));
  const started = performance.now();
  const done = children.map(next);
  for (const c of children) c.send({ type: 'go' } satisfies ToChild);
  await Promise.all(done);
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(children.map((c) => new Promise((resolve) => (c.exitCode !== null ? resolve(undefined) : c.once('exit', resolve)))));
  return seconds;
}

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 384);
  const runs = Number(process.argv[3] ?? 3);
  const model = process.argv[4] ?? 'all-MiniLM-L6-v2';
  const cores = loadConfig().embed.threads;
  const layouts = [
    { name: `1 process × 1 thread`, processes: 1, threads: 1 },
    { name: `1 process × ${cores} threads`, processes: 1, threads: cores },
    { name: `${cores} processes × 1 thread`, processes: cores, threads: 1 },
  ];
  const seconds = layouts.map(() => [] as number[]);
  for (let run = 0; run < runs; run++) {
    for (let k = 0; k < layouts.length; k++) {
      const i = (run + k) % layouts.length;
      const l = layouts[i]!;
      seconds[i]!.push(await layout(l.processes, l.threads, count, model));
      console.error(`run ${run + 1}/${runs} ${l.name}: ${seconds[i]!.at(-1)!.toFixed(1)} s`);
    }
  }
  const base = median(seconds[0]!);
  console.log([
    `Measured ${machine()}; ${count} texts of 120–200 words, calls of ${CALL}, ${model}; median of ${runs} runs; the process may use ${cores} cores.`,
    '',
    '| layout | wall time | texts/s | speed-up over 1 × 1 | runs (s) |',
    '|---|---|---|---|---|',
    ...layouts.map((l, i) =>
      `| ${l.name} | ${median(seconds[i]!).toFixed(1)} s | ${(count / median(seconds[i]!)).toFixed(1)} | ${(base / median(seconds[i]!)).toFixed(2)}× | ${
        seconds[i]!.map((x) => x.toFixed(1)).join(', ')
      } |`
    ),
    '',
    `Load average (1/5/15 min) at the end: ${os.loadavg().map((x) => x.toFixed(1)).join(' / ')}.`,
  ].join('\n'));
}

if (process.argv[2] === 'child') await child();
else await main();
