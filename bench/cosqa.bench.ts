/**
 * Retrieval quality on the CoSQA dev set (web queries against Python functions, human labels) on
 * the embedded profile: every distinct function is filed as one drawer with its real MiniLM
 * embedding, every query labelled 1 is searched through palace/search.ts, and the rank of its
 * function gives recall@1/5/10 and MRR (reciprocal rank, 0 when outside the top 10). Baselines:
 * plain BM25 over the whole corpus with the product's identifier-splitting tokens, and the raw
 * vector order without the hybrid rerank. Reported for all queries and for the two halves (even /
 * odd position in the file), so a change judged on one half can be confirmed on the other.
 * A guard row checks the exact-identifier case the union strategy exists for: each function whose
 * name is unique in the corpus is searched by that bare name. The data set is read from
 * ../shared/data/, never copied into the project.
 *
 *   npx tsx bench/cosqa.bench.ts            # prints Markdown tables for bench/README.md
 *   npx tsx bench/cosqa.bench.ts all-MiniLM-L6-v2,all-MiniLM-L6-v2-q   # one table per model, then
 *                                                                      # the default strategy side by side
 *   npx tsx bench/cosqa.bench.ts all-MiniLM-L6-v2,all-MiniLM-L6-v2-q 40   # smoke run: the first 40 pairs
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../core/config.js';
import { bm25Scores } from '../core/lexical.js';
import { MiniLmEmbedder } from '../embed/minilm.js';
import type { DrawerContext } from '../palace/context.js';
import { search } from '../palace/search.js';
import { openSqliteDrawerIndex } from '../stores/embedded/sqlite-drawer-index.js';
import { machine, median, peakRssMb } from './lib/stats.js';

const DATA = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../shared/data/cosqa-dev.json');
const LIMIT = 10;
const MODELS = (process.argv[2] ?? 'all-MiniLM-L6-v2').split(',');
/** The first this many pairs of the file only (a smoke run); all by default. */
const PAIRS = Number(process.argv[3] ?? Infinity);

interface Pair { idx: string; doc: string; code: string; label: number }
interface Query { text: string; drawerId: string; half: 0 | 1 | 'identifier' }

/** 1-based rank of `target` in `ranked` within the first LIMIT, or 0 when absent. */
function rankOf(ranked: readonly string[], target: string): number {
  const i = ranked.slice(0, LIMIT).indexOf(target);
  return i < 0 ? 0 : i + 1;
}

interface Quality { n: number; r1: number; r5: number; r10: number; mrr: number }

function quality(ranks: readonly number[]): Quality {
  const n = ranks.length;
  const within = (k: number) => ranks.filter((r) => r > 0 && r <= k).length / n;
  return { n, r1: within(1), r5: within(5), r10: within(10), mrr: ranks.reduce((s, r) => s + (r > 0 ? 1 / r : 0), 0) / n };
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

async function main(): Promise<void> {
  const pairs = (JSON.parse(await fs.readFile(DATA, 'utf8')) as Pair[]).slice(0, PAIRS);
  const codes = [...new Set(pairs.map((p) => p.code))];
  const idOf = new Map(codes.map((c, i) => [c, `cosqa_${String(i).padStart(4, '0')}`]));
  const queries: Query[] = pairs.flatMap((p, i) => (p.label === 1 ? [{ text: p.doc, drawerId: idOf.get(p.code)!, half: (i % 2) as 0 | 1 }] : []));
  const names = codes.map((c) => /def\s+([A-Za-z_]\w*)/.exec(c)?.[1]);
  const nameCount = new Map<string, number>();
  for (const n of names) if (n) nameCount.set(n, (nameCount.get(n) ?? 0) + 1);
  const identifierQueries: Query[] = codes.flatMap((c, i) => {
    const n = names[i];
    return n && nameCount.get(n) === 1 ? [{ text: n, drawerId: idOf.get(c)!, half: 'identifier' as const }] : [];
  });

  const summary: string[] = [];
  for (const model of MODELS) {
    const { lines, union, embedS } = await evaluate(model, codes, idOf, queries, identifierQueries);
    console.log([`#### ${model}`, '', ...lines, ''].join('\n'));
    summary.push(`| ${model} | ${union.mrr.toFixed(3)} | ${pct(union.r1)} | ${pct(union.r10)} | ${embedS.toFixed(1)} s (${(codes.length / embedS).toFixed(1)} functions/s) |`);
  }
  if (MODELS.length > 1) {
    console.log(['| model | MRR@10, search union (default) | recall@1 | recall@10 | embedding the corpus |', '|---|---|---|---|---|', ...summary].join('\n'));
  }
}

async function evaluate(model: string, codes: string[], idOf: Map<string, string>, queries: Query[], identifierQueries: Query[]): Promise<{ lines: string[]; union: Quality; embedS: number }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cosqa-bench-'));
  const config = loadConfig({ ...process.env, MEMPALACE_PALACE: dir });
  const embedder = new MiniLmEmbedder(config, { model });
  const drawers = await openSqliteDrawerIndex(dir);
  try {
    let t = performance.now();
    const vectors = await embedder.embed(codes);
    const embedS = (performance.now() - t) / 1000;
    const filedAt = '2026-01-01T00:00:00.000000Z';
    await drawers.upsert(codes.map((code, i) => ({
      id: idOf.get(code)!,
      content: code,
      meta: { wing: 'cosqa', room: 'python', source_file: `/cosqa/${idOf.get(code)}.py`, chunk_index: 0, added_by: 'bench', filed_at: filedAt },
      embedding: vectors[i]!,
    })));
    const ctx: DrawerContext = { config, drawers, embedder };

    const ranks: Record<string, number[]> = { 'BM25 baseline (whole corpus)': [], 'vector order, no rerank': [], 'search vector': [], 'search union (default)': [] };
    const latencies: Record<string, number[]> = { 'search vector': [], 'search union (default)': [] };
    for (const q of [...queries, ...identifierQueries]) {
      const scores = bm25Scores(q.text, codes);
      const bm25Order = codes.map((c, i) => ({ id: idOf.get(c)!, s: scores[i]! })).sort((a, b) => b.s - a.s || (a.id < b.id ? -1 : 1));
      ranks['BM25 baseline (whole corpus)']!.push(rankOf(bm25Order.filter((x) => x.s > 0).map((x) => x.id), q.drawerId));
      const [qv] = await embedder.embed([q.text]);
      ranks['vector order, no rerank']!.push(rankOf((await drawers.knn(qv!, LIMIT)).map((h) => h.drawer.id), q.drawerId));
      for (const [name, strategy] of [['search vector', 'vector'], ['search union (default)', 'union']] as const) {
        t = performance.now();
        const r = await search(ctx, { query: q.text, limit: LIMIT, candidate_strategy: strategy }, { sanitize: true, defaultMaxDistance: 1.5 });
        latencies[name]!.push(performance.now() - t);
        ranks[name]!.push(rankOf(r.results.map((h) => h.drawer_id), q.drawerId));
      }
    }

    const lines = [
      `Measured ${machine()}; ${codes.length} distinct functions filed as drawers (embedding ${embedS.toFixed(1)} s), ${queries.length} queries labelled 1, limit ${LIMIT}, tool path (sanitised query, max_distance 1.5).`,
      '',
      '| strategy | queries | recall@1 | recall@5 | recall@10 | MRR@10 | MRR even half | MRR odd half | guard: bare function name, MRR@10 |',
      '|---|---|---|---|---|---|---|---|---|',
    ];
    for (const [name, rs] of Object.entries(ranks)) {
      const of = (half: Query['half']) => quality(rs.filter((_, i) => [...queries, ...identifierQueries][i]!.half === half));
      const all = quality(rs.slice(0, queries.length));
      const [even, odd, guard] = [of(0), of(1), of('identifier')];
      lines.push(`| ${name} | ${all.n} | ${pct(all.r1)} | ${pct(all.r5)} | ${pct(all.r10)} | ${all.mrr.toFixed(3)} | ${even.mrr.toFixed(3)} (n=${even.n}) | ${odd.mrr.toFixed(3)} (n=${odd.n}) | ${guard.mrr.toFixed(3)} (n=${guard.n}) |`);
    }
    lines.push('', `Search latency incl. query embedding: vector median ${median(latencies['search vector']!).toFixed(1)} ms, union median ${median(latencies['search union (default)']!).toFixed(1)} ms. Peak RSS ${peakRssMb().toFixed(0)} MiB.`);
    return { lines, union: quality(ranks['search union (default)']!.slice(0, queries.length)), embedS };
  } finally {
    await drawers.close();
    await embedder.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

await main();
