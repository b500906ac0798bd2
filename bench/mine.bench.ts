/**
 * Mining throughput on the embedded profile against the embedder alone. A seeded generator builds
 * a source tree of text and code files of varied sizes (line ranges cut from this repository's own
 * TypeScript and Markdown, so the text is real); each run mines it into a fresh palace through the
 * in-process job runner, recording the exact texts the mine hands to the embedder and the time spent
 * inside it, then embeds those same texts directly in one call (the embedder sorts the whole call
 * by length and runs its default batch, so its batches carry the least padding). Both are timed in
 * the same process with the same loaded model, alternating which goes first; medians over the
 * runs. The overhead ratio is (mine time − embed-alone time) / embed-alone time.
 *
 * Several embedder configurations are measured side by side in one process on the same tree, each
 * run going through them in a rotated order: `default` (fp32, MEMPALACE_EMBED_THREADS unset: every
 * core), `threads1` (fp32, MEMPALACE_EMBED_THREADS=1), `int8` (all-MiniLM-L6-v2-q, every core) and
 * `int8pair` (the encoder set all-MiniLM-L6-v2-q + bge-small-en-v1.5-q, 0.5/0.5, every core);
 * the report gives each one's figures and the ratios default/threads1 and int8/default.
 *
 *   npx tsx bench/mine.bench.ts                           # 1000 files, 3 runs, all configurations
 *   npx tsx bench/mine.bench.ts 400 1 default,threads1    # files, runs, configurations
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openRuntime } from '../app/runtime.js';
import { loadConfig } from '../app/config.js';
import { parseEncoderSet } from '../core/encoder-set.js';
import type { Embedder } from '../embed/embedder.js';
import type { ModelIdentity } from '../embed/model-identity.js';
import { openEncoderSet } from '../embed/encoder-set.js';
import type { MineSpec } from '../jobs/job.js';
import { machine, median, peakRssMb, seeded } from './lib/stats.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FILES = Number(process.argv[2] ?? 1000);
const RUNS = Number(process.argv[3] ?? 3);
const CONFIGURATIONS = {
  default: { model: 'all-MiniLM-L6-v2', threads: undefined },
  threads1: { model: 'all-MiniLM-L6-v2', threads: 1 },
  int8: { model: 'all-MiniLM-L6-v2-q', threads: undefined },
  // The opt-in encoder set of issue 26 (MEMPALACE_ENCODERS): both int8 models, fused 0.5/0.5.
  int8pair: { model: 'all-MiniLM-L6-v2-q:0.5,bge-small-en-v1.5-q:0.5', threads: undefined },
} as const;
type ConfigurationName = keyof typeof CONFIGURATIONS;
const CHOSEN = (process.argv[4] ?? 'default,threads1,int8').split(',') as ConfigurationName[];
for (const name of CHOSEN) if (!(name in CONFIGURATIONS)) throw new Error(`unknown configuration ${name}: expected ${Object.keys(CONFIGURATIONS).join(', ')}`);

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

interface MineRun {
  seconds: number;
  embedSeconds: number;
  files: number;
  drawers: number;
  texts: string[];
}

async function mineOnce(tmp: string, project: string, run: number, embedder: Embedder): Promise<MineRun> {
  const palace = path.join(tmp, `palace${run}`);
  const recorder = new RecordingEmbedder(embedder);
  const rt = await openRuntime(loadConfig({ ...process.env, MEMPALACE_PALACE: palace }), { embedder: recorder });
  const spec: MineSpec = {
    kind: 'mine',
    source: { kind: 'dir', path: project },
    mode: 'projects',
    agent: 'bench',
    limit: 0,
    dryRun: false,
    extract: 'exchange',
    respectGitignore: true,
    includeIgnored: [],
    wing: 'bench',
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

interface Measured {
  name: ConfigurationName;
  threads: number;
  mines: MineRun[];
  raws: number[];
}

async function main(): Promise<void> {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mine-bench-'));
  const project = path.join(tmp, 'project');
  const config = loadConfig();
  const measured: Measured[] = CHOSEN.map((name) => ({ name, threads: CONFIGURATIONS[name].threads ?? config.embed.threads, mines: [], raws: [] }));
  const embedders = new Map(
    measured.map((m) => [m.name, openEncoderSet(config, parseEncoderSet(CONFIGURATIONS[m.name].model, 'configuration'), { intraOpNumThreads: m.threads })]),
  );
  try {
    const { bytes } = await generateTree(project, FILES);
    for (const e of embedders.values()) await e.embed(['warm up the model']);
    for (let run = 0; run < RUNS; run++) {
      // Rotate the order of the configurations, and within each alternate mine and embed-alone,
      // so drift in machine load does not favour one side.
      for (let k = 0; k < measured.length; k++) {
        const m = measured[(run + k) % measured.length]!;
        const embedder = embedders.get(m.name)!;
        if (run % 2 === 1 && m.mines.length > 0) m.raws.push(await embedAlone(embedder, m.mines[0]!.texts));
        const mine = await mineOnce(tmp, project, run * measured.length + k, embedder);
        m.mines.push(mine);
        if (run % 2 === 0) m.raws.push(await embedAlone(embedder, mine.texts));
        console.error(
          `run ${run + 1}/${RUNS} ${m.name}: mine ${mine.seconds.toFixed(1)} s (in embedder ${mine.embedSeconds.toFixed(1)} s), embed alone ${
            m.raws[m.raws.length - 1]!.toFixed(1)
          } s`,
        );
      }
    }
    const first = measured[0]!.mines[0]!;
    const chars = first.texts.reduce((sum, t) => sum + t.length, 0);
    const mineS = (m: Measured) => median(m.mines.map((x) => x.seconds));
    const lines = [
      `Measured ${machine()}; ${FILES} generated files (${(bytes / 1e6).toFixed(1)} MB, seed 42), ${first.files} mined into ${first.drawers} drawers (mean ${
        Math.round(chars / first.texts.length)
      } characters); median of ${RUNS} runs; the process may use ${config.embed.threads} cores.`,
      '',
      '| configuration | full mine | files/s | drawers/s | inside embed() | embedder alone, same texts | **pipeline overhead** | runs (mine s / embed-alone s) |',
      '|---|---|---|---|---|---|---|---|',
      ...measured.map((m) => {
        const mine = mineS(m);
        const raw = median(m.raws);
        const inEmbed = median(m.mines.map((x) => x.embedSeconds));
        return `| ${m.name} (${CONFIGURATIONS[m.name].model}, ${m.threads} thread${m.threads === 1 ? '' : 's'}) | ${mine.toFixed(1)} s | ${
          (first.files / mine).toFixed(2)
        } | ${(first.drawers / mine).toFixed(2)} | ${inEmbed.toFixed(1)} s (${((100 * inEmbed) / mine).toFixed(0)} %) | ${raw.toFixed(1)} s | **${
          ((100 * (mine - raw)) / raw).toFixed(1)
        } %** | ${m.mines.map((x, i) => `${x.seconds.toFixed(1)} / ${m.raws[i]!.toFixed(1)}`).join('; ')} |`;
      }),
      '',
    ];
    const byName = new Map(measured.map((m) => [m.name, m]));
    const ratio = (a: ConfigurationName, b: ConfigurationName, label: string) => {
      const x = byName.get(a);
      const y = byName.get(b);
      if (x && y)
        lines.push(
          `- ${label}: **${(mineS(y) / mineS(x)).toFixed(2)}×** (median mine ${mineS(y).toFixed(1)} s vs ${mineS(x).toFixed(1)} s; per run ${
            x.mines.map((r, i) => (y.mines[i]!.seconds / r.seconds).toFixed(2)).join(', ')
          })`,
        );
    };
    ratio('default', 'threads1', 'default threads vs MEMPALACE_EMBED_THREADS=1, mining speed-up');
    ratio('int8', 'default', 'int8 vs fp32 (both default threads), mining speed-up');
    ratio('int8pair', 'default', 'int8 pair (MiniLM int8 + bge int8) vs fp32 MiniLM alone, mining speed-up (below 1: slower)');
    lines.push(
      `- peak RSS of the process (every configuration's model loaded): ${peakRssMb().toFixed(0)} MiB; load average (1/5/15 min) at the end: ${
        os.loadavg().map((x) => x.toFixed(1)).join(' / ')
      }`,
    );
    console.log(lines.join('\n'));
  } finally {
    await Promise.all([...embedders.values()].map((e) => e.close()));
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

await main();
