/**
 * The CoSQA dev set (web queries against Python functions, human labels) as a retrieval test on
 * the embedded profile, shared by bench/cosqa.bench.ts and the quality gate in
 * tests/integration/search-quality.test.ts. Every distinct function is filed as one drawer with
 * its real embedding; every query labelled 1 is searched, and the rank of its function is kept
 * per strategy. Queries are split into two halves (even / odd position in the file), so a change
 * judged on one half can be confirmed on the other; a guard set searches each function whose name
 * is unique by that bare name (the exact-identifier case lexical candidates exist for). The file
 * is read from ../shared/data/, never copied into the project.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../app/config.js';
import { bm25Scores } from '../../core/lexical.js';
import { MiniLmEmbedder } from '../../embed/minilm.js';
import type { Embedder } from '../../embed/embedder.js';
import type { DrawerContext } from '../../palace/context.js';
import { sanitizeQuery } from '../../palace/search/query-sanitizer.js';
import { search } from '../../palace/search/search.js';
import { openSqliteDrawerIndex } from '../../stores/embedded/drawers/sqlite-drawer-index.js';
import { cachedEmbeddings } from './embedding-cache.js';

export const COSQA_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../shared/data/cosqa-dev.json');
export const COSQA_LIMIT = 10;

export type Half = 0 | 1 | 'identifier';
export const STRATEGIES = ['BM25 baseline (whole corpus)', 'vector order, no rerank', 'search vector', 'search union (default)'] as const;
export type Strategy = (typeof STRATEGIES)[number];

interface Pair {
  idx: string;
  doc: string;
  code: string;
  label: number;
}
interface Query {
  text: string;
  drawerId: string;
  half: Half;
}

export interface Quality {
  n: number;
  r1: number;
  r5: number;
  r10: number;
  mrr: number;
}

export interface CosqaRun {
  functions: number;
  /** Queries labelled 1 (the halves); the identifier guard follows them in `queries`. */
  labelled: number;
  queries: Query[];
  /** 1-based rank of each query's function within the first COSQA_LIMIT, 0 when absent, per strategy in `queries` order. */
  ranks: Record<Strategy, number[]>;
  latenciesMs: Record<'search vector' | 'search union (default)', number[]>;
  embedS: number;
}

function rankOf(ranked: readonly string[], target: string): number {
  const i = ranked.slice(0, COSQA_LIMIT).indexOf(target);
  return i < 0 ? 0 : i + 1;
}

export function quality(ranks: readonly number[]): Quality {
  const n = ranks.length;
  const within = (k: number) => ranks.filter((r) => r > 0 && r <= k).length / n;
  return { n, r1: within(1), r5: within(5), r10: within(10), mrr: ranks.reduce((s, r) => s + (r > 0 ? 1 / r : 0), 0) / n };
}

/** Quality of one strategy over one half (or the guard), or over every labelled query when `half` is absent. */
export function qualityOf(run: CosqaRun, strategy: Strategy, half?: Half): Quality {
  const ranks = run.ranks[strategy];
  return half === undefined ? quality(ranks.slice(0, run.labelled)) : quality(ranks.filter((_, i) => run.queries[i]!.half === half));
}

/**
 * The embedder with every query embedded ahead in batches: search() embeds its query again, and
 * one text per call is several times slower than batches, which the timings here do not measure.
 */
async function withQueryVectors(embedder: Embedder, queries: readonly string[], cache: boolean): Promise<Embedder> {
  const vectors = cache ? await cachedEmbeddings(embedder, queries) : await embedder.embed([...queries]);
  const held = new Map(queries.map((q, i) => [q, vectors[i]!]));
  return {
    model: embedder.model,
    dimension: embedder.dimension,
    identity: embedder.identity,
    close: () => embedder.close(),
    embed: async (texts, options) => (texts.every((t) => held.has(t)) ? texts.map((t) => held.get(t)!) : embedder.embed(texts, options)),
  };
}

/**
 * Run `strategies` (all by default) over the first `pairs` pairs of the file (all by default) with
 * `model`. Query vectors are computed ahead, so latencies are of the search without its query embedding.
 * `cache`: take the vectors from the embedding cache (embedding-cache.ts) where it holds them; the
 * quality gate does, the benchmark does not (it reports the embedding time).
 */
export async function runCosqa(model: string, pairs = Infinity, strategies: readonly Strategy[] = STRATEGIES, cache = false): Promise<CosqaRun> {
  const data = (JSON.parse(await fs.readFile(COSQA_FILE, 'utf8')) as Pair[]).slice(0, pairs);
  const codes = [...new Set(data.map((p) => p.code))];
  const idOf = new Map(codes.map((c, i) => [c, `cosqa_${String(i).padStart(4, '0')}`]));
  const labelled: Query[] = data.flatMap((p, i) => (p.label === 1 ? [{ text: p.doc, drawerId: idOf.get(p.code)!, half: (i % 2) as 0 | 1 }] : []));
  const names = codes.map((c) => /def\s+([A-Za-z_]\w*)/.exec(c)?.[1]);
  const nameCount = new Map<string, number>();
  for (const n of names) if (n) nameCount.set(n, (nameCount.get(n) ?? 0) + 1);
  const identifiers: Query[] = codes.flatMap((c, i) => {
    const n = names[i];
    return n && nameCount.get(n) === 1 ? [{ text: n, drawerId: idOf.get(c)!, half: 'identifier' as const }] : [];
  });
  const queries = [...labelled, ...identifiers];

  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cosqa-'));
  const config = loadConfig({ ...process.env, MEMPALACE_PALACE: dir });
  const minilm = new MiniLmEmbedder(config, { model });
  const drawers = await openSqliteDrawerIndex(dir);
  try {
    let t = performance.now();
    const vectors = cache ? await cachedEmbeddings(minilm, codes) : await minilm.embed(codes);
    const embedS = (performance.now() - t) / 1000;
    const embedder = await withQueryVectors(minilm, [...new Set(queries.flatMap((q) => [q.text, sanitizeQuery(q.text).query]))], cache);
    await drawers.upsert(codes.map((code, i) => ({
      id: idOf.get(code)!,
      content: code,
      meta: { wing: 'cosqa', room: 'python', source_file: `/cosqa/${idOf.get(code)}.py`, chunk_index: 0, added_by: 'bench',
        filed_at: '2026-01-01T00:00:00.000000Z' },
      embedding: vectors[i]!,
    })));
    const ctx: DrawerContext = { config, drawers, embedder };
    const ranks = Object.fromEntries(STRATEGIES.map((s) => [s, [] as number[]])) as unknown as Record<Strategy, number[]>;
    const latenciesMs: CosqaRun['latenciesMs'] = { 'search vector': [], 'search union (default)': [] };
    const runs = (s: Strategy) => strategies.includes(s);
    for (const q of queries) {
      if (runs('BM25 baseline (whole corpus)')) {
        const scores = bm25Scores(q.text, codes);
        const bm25Order = codes.map((c, i) => ({ id: idOf.get(c)!, s: scores[i]! })).filter((x) => x.s > 0).sort((a, b) => b.s - a.s || (a.id < b.id ? -1 : 1));
        ranks['BM25 baseline (whole corpus)'].push(rankOf(bm25Order.map((x) => x.id), q.drawerId));
      }
      if (runs('vector order, no rerank')) {
        const [qv] = await embedder.embed([q.text]);
        ranks['vector order, no rerank'].push(rankOf((await drawers.knn(qv!, COSQA_LIMIT)).map((h) => h.drawer.id), q.drawerId));
      }
      for (const [name, strategy] of [['search vector', 'vector'], ['search union (default)', 'union']] as const) {
        if (!runs(name)) continue;
        t = performance.now();
        const r = await search(ctx, { query: q.text, limit: COSQA_LIMIT, candidate_strategy: strategy }, { sanitize: true, defaultMaxDistance: 1.5 });
        latenciesMs[name].push(performance.now() - t);
        ranks[name].push(rankOf(r.results.map((h) => h.drawer_id), q.drawerId));
      }
    }
    return { functions: codes.length, labelled: labelled.length, queries, ranks, latenciesMs, embedS };
  } finally {
    await drawers.close();
    await minilm.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
}
