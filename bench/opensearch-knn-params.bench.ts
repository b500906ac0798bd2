/**
 * The knn search's parameters on OpenSearch, measured rather than assumed (issue 27): the HNSW
 * candidate list (`ef_search`, which the Lucene engine takes as the query's `k`) and the space type
 * of the unit vectors, `cosinesimil` (the mapping's) against `innerproduct` (the same ranking for
 * unit vectors, without the norms Lucene's cosine computes per comparison). The mined-text corpus's
 * n vectors (bench/lib/mined-text-corpus.ts) go into two bare indices that differ only in the space
 * type, with the mapping's m and ef_construction, each merged to one segment; then every query
 * vector (in-distribution, 20 warm-up then 300 timed) runs against every (space, ef) variant in
 * rotating order, so all variants see the same load. Reports recall@20 against an exact scan and
 * the engine round trip's p50/p95 (`size` 20, ids only).
 *
 *   source deploy/local/env.sh && npx tsx bench/opensearch-knn-params.bench.ts 40000 [--json]
 */
import os from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../app/config.js';
import { OpenSearchConnection } from '../stores/opensearch/connection.js';
import { KNN_EF_CONSTRUCTION, KNN_M } from '../stores/opensearch/drawer-mapping.js';
import { nearVector, seededRandom } from '../tests/contract/drawer-index.fixtures.js';
import { exactTruths } from './lib/exact-truths.js';
import { minedTextCorpus } from './lib/mined-text-corpus.js';
import { machine, percentile } from './lib/stats.js';
import { DIM } from './lib/synthetic-drawers.js';

const SPACES = ['cosinesimil', 'innerproduct'] as const;
const EFS = [20, 40, 100, 200, 400];
const QUERY_COUNT = 300;
const WARM_UP = 20;
const BULK = 1000;

const n = Number(process.argv[2] ?? 40_000);
const config = loadConfig();
const conn = new OpenSearchConnection({ url: config.opensearch.url, palaceName: `bench-knn-${process.pid}`, requestTimeoutMs: 3_600_000 });
const client = conn.client;
const indexOf = (space: string) => conn.name(space);
const REPOSITORY = join(import.meta.dirname, '..');
const corpus = minedTextCorpus(n, [REPOSITORY, join(REPOSITORY, 'node_modules')]);
const loadAtStart = os.loadavg()[0]!;

async function load(space: string): Promise<number> {
  const index = indexOf(space);
  await client.indices.create({
    index,
    body: {
      settings: { 'index.knn': true, number_of_shards: 1, number_of_replicas: 0, refresh_interval: '-1' },
      mappings: {
        properties: {
          embedding: { type: 'knn_vector', dimension: DIM,
            method: { name: 'hnsw', engine: 'lucene', space_type: space, parameters: { m: KNN_M, ef_construction: KNN_EF_CONSTRUCTION } } },
        },
      },
    } as never,
  });
  const t = performance.now();
  let body: Record<string, unknown>[] = [];
  const flush = async () => {
    if (body.length > 0) await client.bulk({ index, body });
    body = [];
  };
  for (const row of corpus.vectors()) {
    body.push({ index: { _id: row.id } }, { embedding: Array.from(row.embedding) });
    if (body.length >= 2 * BULK) await flush();
  }
  await flush();
  await client.indices.refresh({ index });
  await client.indices.forcemerge({ index, max_num_segments: 1 });
  return (performance.now() - t) / 1000;
}

try {
  console.error(machine());
  const loadSeconds: Record<string, number> = {};
  for (const space of SPACES) {
    loadSeconds[space] = await load(space);
    console.error(`${space}: ${n} vectors loaded and merged in ${loadSeconds[space]!.toFixed(0)} s`);
  }
  const rnd = seededRandom(5);
  const queries = Array.from({ length: WARM_UP + QUERY_COUNT }, (_, q) => nearVector(rnd, corpus.centers[(q * 13) % corpus.centers.length]!));
  const truths = exactTruths(corpus, queries.slice(WARM_UP)).none;
  const variants = SPACES.flatMap((space) => EFS.map((ef) => ({ space, ef, times: [] as number[], found: 0 })));
  for (const [i, q] of queries.entries()) {
    const vector = Array.from(q);
    for (let j = 0; j < variants.length; j++) {
      const v = variants[(i + j) % variants.length]!;
      const t = performance.now();
      const res = await client.search({ index: indexOf(v.space), body: { size: 20, _source: false, query: { knn: { embedding: { vector, k: v.ef } } } } });
      if (i < WARM_UP) continue;
      v.times.push(performance.now() - t);
      const hits = (res.body as { hits: { hits: { _id: string }[] } }).hits.hits;
      v.found += hits.filter((h) => truths[i - WARM_UP]!.has(h._id)).length;
    }
  }
  const rows = variants.map((v) => ({ space: v.space, ef: v.ef, recall_at_20: Number((v.found / (QUERY_COUNT * 20)).toFixed(3)),
    p50_ms: Number(percentile(v.times, 0.5).toFixed(2)), p95_ms: Number(percentile(v.times, 0.95).toFixed(2)) })
  );
  console.log(`${machine()}\n\n| space | ef (knn k) | recall@20 | p50 | p95 |\n|---|---|---|---|---|`);
  for (const r of rows) console.log(`| ${r.space} | ${r.ef} | ${r.recall_at_20.toFixed(3)} | ${r.p50_ms} ms | ${r.p95_ms} ms |`);
  if (process.argv.includes('--json')) {
    console.log(
      JSON.stringify({ n, load_avg: { start: Number(loadAtStart.toFixed(2)), end: Number(os.loadavg()[0]!.toFixed(2)) }, load_seconds: loadSeconds, rows }),
    );
  }
} finally {
  await client.indices.delete({ index: SPACES.map(indexOf).join(',') }, { ignore: [404] });
  await conn.close();
}
