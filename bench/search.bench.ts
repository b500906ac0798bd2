/**
 * Search latency on the embedded profile at 10k and 100k drawers: p50/p95 of palace/search/search.ts for
 * the default `union` and the `vector` strategies, unfiltered and with a wing filter (one wing of
 * ten), end to end (real MiniLM query embedding included) and with the query vectors computed
 * beforehand (store + rerank only). Drawer texts are real: chunks cut from this repository's
 * TypeScript and Markdown; their vectors are real MiniLM embeddings of 400 of those chunks, each
 * drawer taking its chunk's vector plus small seeded noise (re-normalised), so query-to-drawer
 * distances look like a real palace's. Rows go in through the DrawerIndex port. Each size runs in
 * its own child process, so its peak RSS is its own.
 *
 *   npx tsx bench/search.bench.ts                 # 10000 and 100000; Markdown for bench/README.md
 *   npx tsx bench/search.bench.ts 10000           # one size
 */
import { execFileSync, fork } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../app/config.js';
import type { DrawerWrite } from '../core/drawer.js';
import type { Embedder } from '../embed/embedder.js';
import type { ModelIdentity } from '../embed/model-identity.js';
import { MINILM_FP32_SHA256 } from '../embed/model-locator.js';
import { MiniLmEmbedder } from '../embed/minilm.js';
import type { DrawerContext } from '../palace/context.js';
import type { CandidateStrategy } from '../palace/search/search.js';
import { search } from '../palace/search/search.js';
import { openSqliteDrawerIndex } from '../stores/embedded/drawers/sqlite-drawer-index.js';
import { machine, peakRssMb, percentile, seeded } from './lib/stats.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BASE_CHUNKS = 400;
const WINGS = 10;
const ROUNDS = 3;
const NOISE = 0.08;
const QUERIES = [
  'how is the lease renewed while a job runs',
  'where are drawer ids computed for mined chunks',
  'parse the since and before date window',
  'hybrid rerank of vector and bm25 candidates',
  'what happens when the embedding model is missing',
  'split camelCase identifiers into tokens',
  'resume a mine after a crash from the last batch',
  'fold identical passages from different files',
  'validate the wing name and reject path traversal',
  'HNSW index persisted and rebuilt on open',
  'event_wait blocks until a new event arrives',
  'knowledge graph fact superseded at a date',
  'skip files that did not change since the last mine',
  'query sanitizer removes a prepended system prompt',
  'room detection from folder names and keywords',
  'max_distance filter on lexical candidates',
  'write a diary entry for an agent',
  'tunnels between rooms of different wings',
  'chunk text at paragraph boundaries of 800 characters',
  'fencing token refuses a zombie writer',
];

/** Returns the same vectors for known texts without running the model (store + rerank timing). */
class PrecomputedEmbedder implements Embedder {
  readonly model = 'precomputed';
  readonly dimension = 384;
  readonly identity: ModelIdentity = { name: 'all-MiniLM-L6-v2', dimension: 384, weightsSha256: MINILM_FP32_SHA256 };
  constructor(private readonly vectors: Map<string, Float32Array>) {}
  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((t) => {
      const v = this.vectors.get(t);
      if (!v) throw new Error(`no precomputed vector for ${t}`);
      return v;
    });
  }
  async close(): Promise<void> {}
}

async function repoChunks(): Promise<string[]> {
  const files = execFileSync('git', ['ls-files', '*.ts', '*.md'], { cwd: REPO, encoding: 'utf8' }).split('\n').filter(Boolean);
  const chunks: string[] = [];
  for (const f of files) {
    let current = '';
    for (const line of (await fs.readFile(path.join(REPO, f), 'utf8')).split('\n')) {
      current += `${line}\n`;
      if (current.length >= 500) {
        chunks.push(current.trim());
        current = '';
      }
    }
    if (current.trim().length >= 50) chunks.push(current.trim());
  }
  return chunks;
}

function nearby(base: Float32Array, rnd: () => number): Float32Array {
  const v = new Float32Array(base.length);
  let norm = 0;
  for (let i = 0; i < v.length; i++) {
    v[i] = base[i]! + NOISE * (rnd() * 2 - 1);
    norm += v[i]! * v[i]!;
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < v.length; i++) v[i]! /= norm;
  return v;
}

async function measure(size: number): Promise<string[]> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'search-bench-'));
  const config = loadConfig({ ...process.env, MEMPALACE_PALACE: dir });
  const embedder = new MiniLmEmbedder(config);
  const drawers = await openSqliteDrawerIndex(dir);
  try {
    const chunks = await repoChunks();
    const rnd = seeded(size);
    const baseTexts = Array.from({ length: BASE_CHUNKS }, () => chunks[Math.floor(rnd() * chunks.length)]!);
    const baseVectors = await embedder.embed(baseTexts);
    let t = performance.now();
    const batch = 1000;
    for (let start = 0; start < size; start += batch) {
      const rows: DrawerWrite[] = [];
      for (let i = start; i < Math.min(size, start + batch); i++) {
        const b = i % BASE_CHUNKS;
        // The base chunk for its vector, a different real chunk appended so texts differ too.
        const content = `${baseTexts[b]}\n${chunks[(i * 7919) % chunks.length]!.slice(0, 200)}`;
        rows.push({
          id: `d${i}`,
          content,
          embedding: nearby(baseVectors[b]!, rnd),
          meta: { wing: `wing${i % WINGS}`, room: `room${i % 37}`, source_file: `/src/f${Math.floor(i / 5)}.ts`, chunk_index: i % 5, added_by: 'bench',
            filed_at: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}.000000Z` },
        });
      }
      await drawers.upsert(rows);
    }
    const loadS = (performance.now() - t) / 1000;
    const qv = await embedder.embed(QUERIES);
    const queryVectors = new Map(QUERIES.map((q, i) => [q, qv[i]!]));
    const contexts: [string, DrawerContext][] = [
      ['end to end (query embedded)', { config, drawers, embedder }],
      ['store + rerank (query vector given)', { config, drawers, embedder: new PrecomputedEmbedder(queryVectors) }],
    ];
    const lines: string[] = [];
    for (const [label, ctx] of contexts) {
      for (const strategy of ['union', 'vector'] as CandidateStrategy[]) {
        for (const wing of [undefined, 'wing3']) {
          await search(ctx, { query: QUERIES[0], candidate_strategy: strategy, wing }, { sanitize: true, defaultMaxDistance: 1.5 });
          const ms: number[] = [];
          for (let r = 0; r < ROUNDS; r++) {
            for (const query of QUERIES) {
              t = performance.now();
              await search(ctx, { query, limit: 10, candidate_strategy: strategy, wing }, { sanitize: true, defaultMaxDistance: 1.5 });
              ms.push(performance.now() - t);
            }
          }
          lines.push(
            `| ${size.toLocaleString('en')} | ${strategy} | ${wing ? `wing (1 of ${WINGS})` : 'none'} | ${label} | ${percentile(ms, 0.5).toFixed(1)} | ${
              percentile(ms, 0.95).toFixed(1)
            } |`,
          );
        }
      }
    }
    lines.push(`| ${size.toLocaleString('en')} | | | load through the port ${loadS.toFixed(0)} s; peak RSS ${peakRssMb().toFixed(0)} MiB | | |`);
    return lines;
  } finally {
    await drawers.close();
    await embedder.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const [sizeArg, child] = process.argv.slice(2);
  if (child === '--child') {
    process.send!(await measure(Number(sizeArg)));
    return;
  }
  const sizes = sizeArg ? [Number(sizeArg)] : [10_000, 100_000];
  const lines = [
    `Measured ${machine()}; limit 10, tool path, ${QUERIES.length} queries × ${ROUNDS} rounds per row.`,
    '',
    '| drawers | strategy | filter | measure | p50 ms | p95 ms |',
    '|---|---|---|---|---|---|',
  ];
  for (const size of sizes) {
    const rows = await new Promise<string[]>((resolve, reject) => {
      const c = fork(fileURLToPath(import.meta.url), [String(size), '--child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      c.once('message', (m) => resolve(m as string[]));
      c.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`size ${size} exited ${code}`))));
    });
    lines.push(...rows);
  }
  lines.push('', `Load average at the end (other jobs on the machine): ${os.loadavg().map((x) => x.toFixed(1)).join(' / ')}.`);
  console.log(lines.join('\n'));
}

await main();
