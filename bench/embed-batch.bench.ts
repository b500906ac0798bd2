/**
 * Texts per ONNX run (the embedder's batch size) on the texts a mine embeds. The chunks of this
 * repository's tracked .ts/.md files (chunked as mining chunks them, files in a seeded order, the
 * first `texts` chunks), embedded with every core as intra-op threads at each batch size: once in
 * one call (the embedder sorts the whole call by token count, so its batches carry the least
 * padding) and once in calls of one mining batch (64 files' chunks, sorted within the call, as a
 * mine hands them over). Batch sizes alternate within each run; medians over the runs.
 *
 *   npx tsx bench/embed-batch.bench.ts [texts] [runs] [sizes] [model]   # 400 texts, 3 runs, 1,4,8,16,32, fp32
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chunkText } from '../core/chunking.js';
import { loadConfig } from '../app/config.js';
import { strip } from '../core/text.js';
import { MiniLmEmbedder } from '../embed/minilm.js';
import { machine, median, seeded } from './lib/stats.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TEXTS = Number(process.argv[2] ?? 400);
const RUNS = Number(process.argv[3] ?? 3);
const SIZES = (process.argv[4] ?? '1,4,8,16,32').split(',').map(Number);
const MODEL = process.argv[5] ?? 'all-MiniLM-L6-v2';
const FILES_PER_BATCH = 64;

/** The first `count` chunks of the repository's files in a seeded order, grouped per 64 files. */
function miningCalls(count: number): string[][] {
  const files = execFileSync('git', ['ls-files', '*.ts', '*.md'], { cwd: REPO, encoding: 'utf8' }).split('\n').filter(Boolean);
  const rnd = seeded(14);
  const order = files.map((f) => ({ f, k: rnd() })).sort((a, b) => a.k - b.k).map((x) => x.f);
  const calls: string[][] = [];
  let taken = 0;
  for (let i = 0; i < order.length && taken < count; i += FILES_PER_BATCH) {
    const call = order.slice(i, i + FILES_PER_BATCH).flatMap((f) => chunkText(strip(fs.readFileSync(path.join(REPO, f), 'utf8'))).map((c) => c.content)).slice(
      0,
      count - taken,
    );
    taken += call.length;
    calls.push(call);
  }
  return calls;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return (performance.now() - t) / 1000;
}

const calls = miningCalls(TEXTS);
const texts = calls.flat();
const config = loadConfig();
const embedders = new Map(SIZES.map((size) => [size, new MiniLmEmbedder(config, { model: MODEL, batchSize: size })]));
const oneCall = new Map(SIZES.map((size) => [size, [] as number[]]));
const perBatch = new Map(SIZES.map((size) => [size, [] as number[]]));
try {
  for (const e of embedders.values()) await e.embed(texts.slice(0, 2));
  for (let run = 0; run < RUNS; run++) {
    for (let k = 0; k < SIZES.length; k++) {
      const size = SIZES[(run + k) % SIZES.length]!;
      const e = embedders.get(size)!;
      oneCall.get(size)!.push(await timed(() => e.embed(texts)));
      perBatch.get(size)!.push(await timed(async () => {
        for (const call of calls) await e.embed(call);
      }));
      console.error(
        `run ${run + 1}/${RUNS} batch ${size}: one call ${oneCall.get(size)!.at(-1)!.toFixed(1)} s, per mining batch ${
          perBatch.get(size)!.at(-1)!.toFixed(1)
        } s`,
      );
    }
  }
  const chars = texts.reduce((s, t) => s + t.length, 0);
  const best = Math.min(...SIZES.map((s) => median(oneCall.get(s)!)));
  console.log(
    `Measured ${machine()}; ${MODEL}, ${config.embed.threads} intra-op threads; ${texts.length} chunks (mean ${
      Math.round(chars / texts.length)
    } characters) in ${calls.length} mining calls; median of ${RUNS} runs; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' / ')} at the end.\n`,
  );
  console.log(
    '| texts per ONNX run | one call, s | texts/s | calls of one mining batch, s | texts/s | vs the fastest one-call figure | runs (one call / per batch, s) |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const size of SIZES) {
    const one = median(oneCall.get(size)!);
    const per = median(perBatch.get(size)!);
    console.log(
      `| ${size} | ${one.toFixed(1)} | ${(texts.length / one).toFixed(1)} | ${per.toFixed(1)} | ${(texts.length / per).toFixed(1)} | ${
        (per / best).toFixed(2)
      }× | ${oneCall.get(size)!.map((x, i) => `${x.toFixed(1)} / ${perBatch.get(size)![i]!.toFixed(1)}`).join('; ')} |`,
    );
  }
} finally {
  await Promise.all([...embedders.values()].map((e) => e.close()));
}
