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
 * A third index holds the same vectors in the segments a live load leaves (a refresh after every
 * bulk request, Lucene's default merge policy, no force merge): the graphs a search walks while a
 * mine runs, before the merge after it.
 *
 * `--real` indexes real embeddings instead of the synthetic clusters: the first n chunks of the
 * corpus embedded by the palace's model, and the held-out queries (phrases, identifier pairs)
 * embedded the same way, which lie far less near their answers than the synthetic queries do
 * (held in memory; the model's time is not timed).
 *
 *   source deploy/local/env.sh && npx tsx bench/opensearch-knn-params.bench.ts 40000 [--json]
 *   npx tsx bench/opensearch-knn-params.bench.ts 20000 --real --json
 *   npx tsx bench/opensearch-knn-params.bench.ts 20000 --real --embed-only     # embed now, measure later
 *   npx tsx bench/opensearch-knn-params.bench.ts 20000 --real --hnsw 32:128,16:256 --ef 100,200,400
 */
import { createWriteStream, existsSync, readFileSync, renameSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../app/config.js';
import { OpenSearchConnection } from '../stores/opensearch/connection.js';
import { KNN_EF_CONSTRUCTION, KNN_M } from '../stores/opensearch/drawer-mapping.js';
import { MiniLmEmbedder } from '../embed/minilm.js';
import { nearVector, seededRandom } from '../tests/contract/drawer-index.fixtures.js';
import { correctHits, exactTruths } from './lib/exact-truths.js';
import { dot } from '../core/vector.js';
import { minedTextCorpus } from './lib/mined-text-corpus.js';
import { listFlag } from './lib/args.js';
import { machine, percentile } from './lib/stats.js';
import { DIM } from './lib/synthetic-drawers.js';

interface IndexVariant {
  name: string;
  space: 'cosinesimil' | 'innerproduct';
  merged: boolean;
  m: number;
  efConstruction: number;
}
/**
 * The indices compared: each space type merged to one segment, cosinesimil as a live load leaves
 * it, and with `--hnsw m:ef_construction,…` merged cosinesimil graphs built with other parameters.
 */
const HNSW = listFlag('--hnsw').map((p) => p.split(':').map(Number));
const INDICES: IndexVariant[] = [
  { name: 'cosinesimil', space: 'cosinesimil', merged: true, m: KNN_M, efConstruction: KNN_EF_CONSTRUCTION },
  { name: 'innerproduct', space: 'innerproduct', merged: true, m: KNN_M, efConstruction: KNN_EF_CONSTRUCTION },
  { name: 'cosinesimil-live', space: 'cosinesimil', merged: false, m: KNN_M, efConstruction: KNN_EF_CONSTRUCTION },
  ...HNSW.map(([m, efConstruction]) => ({ name: `cosinesimil-m${m}-efc${efConstruction}`, space: 'cosinesimil' as const, merged: true, m: m!,
    efConstruction: efConstruction! })
  ),
];
const EFS = listFlag('--ef', '20,40,100,200,400').map(Number);
/** Corpus size that holds out at least WARM_UP + QUERY_COUNT queries (one chunk in 97). */
const QUERY_CORPUS = 33_000;
const QUERY_COUNT = 300;
const WARM_UP = 20;
const BULK = 1000;

const n = Number(process.argv[2] ?? 40_000);
const REAL = process.argv.includes('--real');
const config = loadConfig();
const conn = new OpenSearchConnection({ url: config.opensearch.url, palaceName: `bench-knn-${process.pid}`, requestTimeoutMs: 3_600_000 });
const client = conn.client;
const indexOf = (v: IndexVariant) => conn.name(v.name);
const REPOSITORY = join(import.meta.dirname, '..');
const corpus = minedTextCorpus(REAL ? Math.max(n, QUERY_CORPUS) : n, [REPOSITORY, join(REPOSITORY, 'node_modules')]);
const loadAtStart = os.loadavg()[0]!;

interface Row {
  wing: string;
  room: string;
  id: string;
  embedding: Float32Array;
}

/**
 * The first n chunks and the held-out queries embedded by the palace's model, kept in a file of
 * float32 rows (chunks, then queries) under the temp directory: the model's minutes are spent once
 * per size, and `--embed-only` spends them ahead of a measurement.
 */
async function realEmbeddings(): Promise<{ rows: Row[]; queries: Float32Array[] }> {
  const file = join(os.tmpdir(), `mempalace-knn-params-real-${n}.f32`);
  const queryCount = WARM_UP + QUERY_COUNT;
  if (!existsSync(file)) {
    const model = new MiniLmEmbedder(config);
    const out = createWriteStream(file + '.part');
    try {
      let embedded = 0;
      const t = performance.now();
      for (const batch of corpus.drawers(64)) {
        if (embedded >= n) continue; // the walk goes on to hold out the queries
        const texts = batch.slice(0, n - embedded).map((d) => d.content);
        for (const v of await model.embed(texts)) out.write(Buffer.from(v.buffer, v.byteOffset, v.byteLength));
        embedded += texts.length;
        if (embedded % 5_000 < 64) console.error(`embedded ${embedded} chunks, ${(embedded / ((performance.now() - t) / 1000)).toFixed(0)}/s`);
      }
      for (const v of await model.embed(corpus.queries.slice(0, queryCount))) out.write(Buffer.from(v.buffer, v.byteOffset, v.byteLength));
    } finally {
      await model.close();
      await new Promise((resolve) => out.end(resolve));
    }
    renameSync(file + '.part', file);
  }
  const all = new Float32Array(readFileSync(file).buffer.slice(0));
  const vector = (i: number) => all.subarray(i * DIM, (i + 1) * DIM);
  return {
    rows: Array.from({ length: n }, (_, i) => ({ wing: '', room: '', id: `bench_${i}`, embedding: vector(i) })),
    queries: Array.from({ length: all.length / DIM - n }, (_, q) => vector(n + q)),
  };
}

async function load(v: IndexVariant, rows: () => Iterable<Row>): Promise<{ seconds: number; segments: number }> {
  const index = indexOf(v);
  await client.indices.create({
    index,
    body: {
      settings: { 'index.knn': true, number_of_shards: 1, number_of_replicas: 0, refresh_interval: '-1' },
      mappings: {
        properties: {
          embedding: { type: 'knn_vector', dimension: DIM,
            method: { name: 'hnsw', engine: 'lucene', space_type: v.space, parameters: { m: v.m, ef_construction: v.efConstruction } } },
        },
      },
    } as never,
  });
  const t = performance.now();
  let body: Record<string, unknown>[] = [];
  const flush = async () => {
    if (body.length > 0) await client.bulk({ index, body });
    if (!v.merged) await client.indices.refresh({ index });
    body = [];
  };
  for (const row of rows()) {
    body.push({ index: { _id: row.id } }, { embedding: Array.from(row.embedding) });
    if (body.length >= 2 * BULK) await flush();
  }
  await flush();
  await client.indices.refresh({ index });
  if (v.merged) await client.indices.forcemerge({ index, max_num_segments: 1 });
  const segments = ((await client.cat.segments({ index, format: 'json' })).body as unknown[]).length;
  return { seconds: (performance.now() - t) / 1000, segments };
}

try {
  console.error(machine());
  let rows: () => Iterable<Row>;
  let queries: Float32Array[];
  if (REAL) {
    const real = await realEmbeddings();
    if (process.argv.includes('--embed-only')) process.exit(0);
    rows = () => real.rows;
    queries = real.queries;
  } else {
    const rnd = seededRandom(5);
    rows = () => corpus.vectors();
    queries = Array.from({ length: WARM_UP + QUERY_COUNT }, (_, q) => nearVector(rnd, corpus.centers[(q * 13) % corpus.centers.length]!));
  }
  if (queries.length < WARM_UP + QUERY_COUNT) throw new Error(`only ${queries.length} held-out queries`);
  const loaded: Record<string, { seconds: number; segments: number }> = {};
  for (const v of INDICES) {
    loaded[v.name] = await load(v, rows);
    console.error(`${v.name}: ${n} vectors loaded in ${loaded[v.name]!.seconds.toFixed(0)} s, ${loaded[v.name]!.segments} segment(s)`);
  }
  const truths = exactTruths(rows(), queries.slice(WARM_UP)).none;
  // A hit's exact distance, where the rows are held (real embeddings): ties with the 20th count.
  const held = REAL ? new Map([...rows()].map((r) => [r.id, r.embedding])) : undefined;
  const distanceOf = (id: string, q: Float32Array) => {
    const v = held?.get(id);
    return v && 1 - dot(v, q);
  };
  const variants = INDICES.flatMap((index) => EFS.map((ef) => ({ index, ef, times: [] as number[], found: 0 })));
  for (const [i, q] of queries.entries()) {
    const vector = Array.from(q);
    for (let j = 0; j < variants.length; j++) {
      const v = variants[(i + j) % variants.length]!;
      const t = performance.now();
      const res = await client.search({ index: indexOf(v.index), body: { size: 20, _source: false, query: { knn: { embedding: { vector, k: v.ef } } } } });
      if (i < WARM_UP) continue;
      v.times.push(performance.now() - t);
      const hits = (res.body as { hits: { hits: { _id: string }[] } }).hits.hits;
      v.found += correctHits(truths[i - WARM_UP]!, hits.map((h) => ({ id: h._id, distance: distanceOf(h._id, q) })));
    }
  }
  const results = variants.map((v) => ({ index: v.index.name, ef: v.ef, recall_at_20: Number((v.found / (QUERY_COUNT * 20)).toFixed(3)),
    p50_ms: Number(percentile(v.times, 0.5).toFixed(2)), p95_ms: Number(percentile(v.times, 0.95).toFixed(2)) })
  );
  console.log(`${machine()}\n\n| index (segments) | ef (knn k) | recall@20 | p50 | p95 |\n|---|---|---|---|---|`);
  for (const r of results) {
    console.log(`| ${r.index} (${loaded[r.index]!.segments}) | ${r.ef} | ${r.recall_at_20.toFixed(3)} | ${r.p50_ms} ms | ${r.p95_ms} ms |`);
  }
  if (process.argv.includes('--json')) {
    console.log(
      JSON.stringify({ n, vectors: REAL ? 'real' : 'synthetic', load_avg: { start: Number(loadAtStart.toFixed(2)), end: Number(os.loadavg()[0]!.toFixed(2)) },
        loaded, rows: results }),
    );
  }
} finally {
  await client.indices.delete({ index: INDICES.map(indexOf).join(',') }, { ignore: [404] });
  await conn.close();
}
