/**
 * Mining throughput on the embedded profile against the embedder alone. A seeded generator builds
 * a source tree of text and code files of varied sizes (line ranges cut from this repository's own
 * TypeScript and Markdown, so the text is real); each run mines it into a fresh palace through the
 * in-process job runner, recording the exact texts the mine hands to the embedder and the time spent
 * inside it, then embeds those same texts directly in one call (the embedder sorts them by length
 * and runs batches of 32: the cheapest way to embed them). Both are timed in the same process with
 * the same loaded model, alternating which goes first; medians over the runs. The overhead ratio is
 * (mine time − embed-alone time) / embed-alone time.
 *
 *   npx tsx bench/mine.bench.ts              # 1000 files, 3 runs; prints Markdown for bench/README.md
 *   npx tsx bench/mine.bench.ts 400 1        # files, runs
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openRuntime } from '../cli/runtime.js';
import { loadConfig } from '../core/config.js';
import type { Embedder } from '../embed/embedder.js';
import type { ModelIdentity } from '../embed/model-identity.js';
import { MiniLmEmbedder } from '../embed/minilm.js';
import type { MineSpec } from '../palace/jobs.js';
import { machine, median, peakRssMb, seeded } from './lib/stats.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FILES = Number(process.argv[2] ?? 1000);
const RUNS = Number(process.argv[3] ?? 3);

/** Records every text the pipeline embeds and the time spent inside the embedder. */
class RecordingEmbedder implements Embedder {
  readonly model: string;
  readonly dimension: number;
  readonly identity: ModelIdentity;
  texts: string[] = [];
  embedMs = 0;
  constructor(private readonly inner: Embedder) {
    this.model = inner.model;
    this.dimension = inner.dimension;
    this.identity = inner.identity;
  }
  async embed(texts: string[]): Promise<Float32Array[]> {
    const t = performance.now();
    const out = await this.inner.embed(texts);
    this.embedMs += performance.now() - t;
    this.texts.push(...texts);
    return out;
  }
  async close(): Promise<void> {}
}

/** A tree of `count` files: log-uniform sizes 80..6000 characters, in nested folders. */
async function generateTree(root: string, count: number): Promise<{ bytes: number }> {
  const sources = execFileSync('git', ['ls-files', '*.ts', '*.md'], { cwd: REPO, encoding: 'utf8' }).split('\n').filter(Boolean);
  const corpora = await Promise.all(sources.map(async (f) => ({ ext: path.extname(f), lines: (await fs.readFile(path.join(REPO, f), 'utf8')).split('\n') })));
  const rnd = seeded(42);
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    const src = corpora[Math.floor(rnd() * corpora.length)]!;
    const target = Math.round(80 * Math.exp(rnd() * Math.log(6000 / 80)));
    let at = Math.floor(rnd() * src.lines.length);
    const out: string[] = [];
    let size = 0;
    while (size < target) {
      const line = src.lines[at % src.lines.length]!;
      out.push(line);
      size += line.length + 1;
      at++;
    }
    const dir = path.join(root, `pkg${i % 12}`, `mod${i % 7}`);
    await fs.mkdir(dir, { recursive: true });
    const text = out.join('\n');
    bytes += Buffer.byteLength(text);
    await fs.writeFile(path.join(dir, `file${i}${src.ext === '.md' ? '.md' : rnd() < 0.5 ? '.ts' : '.py'}`), text);
  }
  return { bytes };
}

interface MineRun { seconds: number; embedSeconds: number; files: number; drawers: number; texts: string[] }

async function mineOnce(tmp: string, project: string, run: number, embedder: Embedder): Promise<MineRun> {
  const palace = path.join(tmp, `palace${run}`);
  const recorder = new RecordingEmbedder(embedder);
  const rt = await openRuntime(loadConfig({ ...process.env, MEMPALACE_PALACE: palace }), { embedder: recorder });
  const spec: MineSpec = {
    kind: 'mine', source: { kind: 'dir', path: project }, mode: 'projects', agent: 'bench', limit: 0, dryRun: false,
    extract: 'exchange', respectGitignore: true, includeIgnored: [], wing: 'bench',
  };
  const t = performance.now();
  const started = await rt.jobs.start(spec);
  const done = await rt.jobs.wait(started.job_id, 3_600_000);
  const seconds = (performance.now() - t) / 1000;
  if (done.state !== 'completed') throw new Error(`mine ended ${done.state}: ${done.error ?? ''}`);
  await rt.close();
  await fs.rm(palace, { recursive: true, force: true });
  return { seconds, embedSeconds: recorder.embedMs / 1000, files: done.files_mined, drawers: done.drawers_written, texts: recorder.texts };
}

async function embedAlone(embedder: Embedder, texts: string[]): Promise<number> {
  const t = performance.now();
  await embedder.embed(texts);
  return (performance.now() - t) / 1000;
}

async function main(): Promise<void> {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mine-bench-'));
  const project = path.join(tmp, 'project');
  const embedder = new MiniLmEmbedder(loadConfig(), { batchSize: 32 });
  try {
    const { bytes } = await generateTree(project, FILES);
    await embedder.embed(['warm up the model']);
    const mines: MineRun[] = [];
    const raws: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      // Alternate the order so drift in machine load does not favour one side.
      if (run % 2 === 1 && mines.length > 0) raws.push(await embedAlone(embedder, mines[0]!.texts));
      const m = await mineOnce(tmp, project, run, embedder);
      mines.push(m);
      if (run % 2 === 0) raws.push(await embedAlone(embedder, m.texts));
      console.error(`run ${run + 1}/${RUNS}: mine ${m.seconds.toFixed(1)} s (in embedder ${m.embedSeconds.toFixed(1)} s), embed alone ${raws[raws.length - 1]!.toFixed(1)} s`);
    }
    const first = mines[0]!;
    const mineS = median(mines.map((m) => m.seconds));
    const inEmbedS = median(mines.map((m) => m.embedSeconds));
    const rawS = median(raws);
    const chars = first.texts.reduce((s, t) => s + t.length, 0);
    console.log([
      `Measured ${machine()}; ${FILES} generated files (${(bytes / 1e6).toFixed(1)} MB, seed 42), ${first.files} mined into ${first.drawers} drawers (mean ${Math.round(chars / first.texts.length)} characters); median of ${RUNS} runs.`,
      '',
      '| measure | result |',
      '|---|---|',
      `| embedder alone, the mine's ${first.texts.length} chunk texts in one call (sorted by length, batches of 32) | ${rawS.toFixed(1)} s, ${(first.texts.length / rawS).toFixed(1)} chunks/s |`,
      `| full mine (scan, read, chunk, rooms, labels, embed, SQLite + FTS5 + HNSW writes, file states, hallways) | ${mineS.toFixed(1)} s, ${(first.files / mineS).toFixed(1)} files/s, ${(first.drawers / mineS).toFixed(1)} drawers/s |`,
      `| of which inside embed() | ${inEmbedS.toFixed(1)} s (${((100 * inEmbedS) / mineS).toFixed(0)} %) |`,
      `| **pipeline overhead over embedding alone** | **${((100 * (mineS - rawS)) / rawS).toFixed(1)} %** (target < 15 %) |`,
      `| runs (mine s / embed-alone s) | ${mines.map((m, i) => `${m.seconds.toFixed(1)} / ${raws[i]!.toFixed(1)}`).join('; ')} |`,
      `| peak RSS of the process (model, both measures) | ${peakRssMb().toFixed(0)} MiB |`,
      `| load average (1/5/15 min) at the end, other jobs on the machine | ${os.loadavg().map((x) => x.toFixed(1)).join(' / ')} |`,
    ].join('\n'));
  } finally {
    await embedder.close();
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

await main();
