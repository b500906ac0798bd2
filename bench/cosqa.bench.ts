/**
 * Retrieval quality on the CoSQA dev set (bench/lib/cosqa.ts) on the embedded profile: recall@1/5/10
 * and MRR (reciprocal rank, 0 when outside the top 10) per strategy, for all queries and for the
 * two halves, plus the bare-identifier guard. Baselines: plain BM25 over the whole corpus with the
 * product's identifier-splitting tokens, and the raw vector order without the fused ranking.
 *
 *   npx tsx bench/cosqa.bench.ts            # prints Markdown tables for bench/README.md
 *   npx tsx bench/cosqa.bench.ts all-MiniLM-L6-v2,all-MiniLM-L6-v2-q   # one table per model, then
 *                                                                      # the default strategy side by side
 *   npx tsx bench/cosqa.bench.ts all-MiniLM-L6-v2,all-MiniLM-L6-v2-q 40   # smoke run: the first 40 pairs
 */
import { COSQA_LIMIT, qualityOf, runCosqa, STRATEGIES } from './lib/cosqa.js';
import { machine, median, peakRssMb } from './lib/stats.js';

const MODELS = (process.argv[2] ?? 'all-MiniLM-L6-v2').split(',');
/** The first this many pairs of the file only (a smoke run); all by default. */
const PAIRS = Number(process.argv[3] ?? Infinity);

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

const summary: string[] = [];
for (const model of MODELS) {
  const run = await runCosqa(model, PAIRS);
  const lines = [
    `#### ${model}`,
    '',
    `Measured ${machine()}; ${run.functions} distinct functions filed as drawers (embedding ${
      run.embedS.toFixed(1)
    } s), ${run.labelled} queries labelled 1, limit ${COSQA_LIMIT}, tool path (sanitised query, max_distance 1.5).`,
    '',
    '| strategy | queries | recall@1 | recall@5 | recall@10 | MRR@10 | MRR even half | MRR odd half | guard: bare function name, MRR@10 |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const name of STRATEGIES) {
    const all = qualityOf(run, name);
    const [even, odd, guard] = [qualityOf(run, name, 0), qualityOf(run, name, 1), qualityOf(run, name, 'identifier')];
    lines.push(
      `| ${name} | ${all.n} | ${pct(all.r1)} | ${pct(all.r5)} | ${pct(all.r10)} | ${all.mrr.toFixed(3)} | ${even.mrr.toFixed(3)} (n=${even.n}) | ${
        odd.mrr.toFixed(3)
      } (n=${odd.n}) | ${guard.mrr.toFixed(3)} (n=${guard.n}) |`,
    );
  }
  lines.push('',
    `Search latency without the query embedding (computed ahead in batches): vector median ${
      median(run.latenciesMs['search vector']).toFixed(1)
    } ms, union median ${median(run.latenciesMs['search union (default)']).toFixed(1)} ms. Peak RSS ${peakRssMb().toFixed(0)} MiB.`, '');
  console.log(lines.join('\n'));
  const union = qualityOf(run, 'search union (default)');
  summary.push(
    `| ${model} | ${union.mrr.toFixed(3)} | ${pct(union.r1)} | ${pct(union.r10)} | ${run.embedS.toFixed(1)} s (${
      (run.functions / run.embedS).toFixed(1)
    } functions/s) |`,
  );
}
if (MODELS.length > 1) {
  console.log(['| model | MRR@10, search union (default) | recall@1 | recall@10 | embedding the corpus |', '|---|---|---|---|---|', ...summary].join('\n'));
}
