/**
 * Drawers on OpenSearch vs the embedded profile, on the same data: bulk indexing rate, the cost
 * of each refresh policy, and search latency (p50/p95) at 100k drawers. The corpus is synthetic
 * (clustered 384-d unit vectors, ~500-character texts with a Zipf word distribution); the queries
 * are real sentences embedded once with MiniLM up front, so latencies are the stores' work plus
 * the product's rerank, not the model's. Also reports how often both profiles returned exactly
 * the same results (at this size both vector searches are approximate).
 *
 *   source deploy/local/env.sh && npx tsx bench/opensearch.bench.ts            # 100 000 drawers
 *   npx tsx bench/opensearch.bench.ts 20000                                    # another size
 *   npx tsx bench/opensearch.bench.ts 1000000 --no-merge                       # keep the load's segments
 *   npx tsx bench/opensearch.bench.ts 100000 --json                            # figures as JSON, last line
 *
 * With `--json` the refresh-policy lines are skipped and the last line of stdout is one object,
 * `{"n", "load_avg", "cluster": P, "embedded": P}`, each P `{"load_per_s", "disk_bytes", "knn":
 * {"none", "wing95", "room2"} each {"p50_ms", "p95_ms", "recall_at_20"}, "lexical": {"p50_ms",
 * "p95_ms"}, "union": {"p50_ms", "p95_ms"}}` (issue 27), so two runs compare field by field;
 * `load_avg` is the 1-minute load average at the start and at the end of the run.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../app/config.js';
import type { DrawerWrite } from '../core/drawer.js';
import { lexicalTokens } from '../core/lexical.js';
import type { Embedder } from '../embed/embedder.js';
import type { ModelIdentity } from '../embed/model-identity.js';
import { MINILM_FP32_SHA256 } from '../embed/model-locator.js';
import { MiniLmEmbedder } from '../embed/minilm.js';
import { search } from '../palace/search/search.js';
import type { SearchResult } from '../palace/search/search.js';
import { openSqliteDrawerIndex } from '../stores/embedded/drawers/sqlite-drawer-index.js';
import { dropPalaceIndices, withBulkLoadSettings } from '../stores/opensearch/drawer-mapping.js';
import { OpenSearchDrawerIndex } from '../stores/opensearch/opensearch-drawer-index.js';
import type { RefreshPolicy } from '../stores/opensearch/drawer-indices.js';
import type { DrawerFilter } from '../stores/ports/drawers/drawer-index.js';
import type { DrawerStore } from '../stores/ports/palace-stores.js';
import { bruteForce, nearVector, seededRandom } from '../tests/contract/drawer-index.fixtures.js';
import { machine, percentile } from './lib/stats.js';
import { DIM, syntheticCorpus } from './lib/synthetic-drawers.js';

const BATCH = 500;
/** Bulk requests in flight during a load: one per core of this machine's OpenSearch node. */
const IN_FLIGHT = 2;
const config = loadConfig();

const VOCABULARY = (
  'retry backoff timeout lease fence worker heartbeat cache shard replica queue batch token session index cursor stream event ' +
  'artifact patch drawer wing room hallway tunnel entity graph vector lexical rerank chunk embed scan manifest activity workflow ' +
  'deadline commit branch merge review deploy rollback metric latency throughput memory budget the a of to and in is for on with ' +
  'that this it as by from be are was at or an not but we can all will which one has have if more when so what about how they ' +
  'config loader parser handler request response client server database table column query result error warning log trace span'
).split(' ');

const QUERIES = [
  'retry with backoff after a timeout',
  'how is the lease fenced when a worker dies',
  'cache shard replica placement',
  'which workflow activity sends the heartbeat',
  'vector lexical rerank of search results',
  'commit branch merge review process',
  'deploy rollback when latency grows',
  'where is the config loader',
  'parser error handling for bad requests',
  'throughput metric for the queue',
  'cursor over the event stream',
  'drawer wing room layout',
  'entity graph and tunnels',
  'embed each chunk after the scan',
  'token session expiry',
  'database table with one column per field',
  'trace span of a slow request',
  'memory budget of the index',
  'client server response codes',
  'warning logs during a deploy',
];

function corpus(n: number): { rows: DrawerWrite[]; centers: Float32Array[] } {
  // Zipf-like: word i drawn with weight 1/(i+1), so a few words are in nearly every drawer.
  const weights = VOCABULARY.map((_, i) => 1 / (i + 1));
  const cumulative = weights.map(((s) => (w: number) => (s += w))(0));
  const total = cumulative[cumulative.length - 1]!;
  const word = (rnd: () => number) => {
    const x = rnd() * total;
    let lo = 0;
    while (cumulative[lo]! < x) lo++;
    return VOCABULARY[lo]!;
  };
  return syntheticCorpus(n, n, (i, rnd) => `${Array.from({ length: 80 }, () => word(rnd)).join(' ')} handler_${i % 97}`);
}

/** The query vectors computed once by MiniLM, served by text so search() does no model work. */
class PrecomputedEmbedder implements Embedder {
  readonly model = 'all-MiniLM-L6-v2 (precomputed)';
  readonly dimension = DIM;
  readonly identity: ModelIdentity = { name: 'all-MiniLM-L6-v2', dimension: DIM, weightsSha256: MINILM_FP32_SHA256 };
  constructor(private readonly vectors: Map<string, Float32Array>) {}
  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((t) => {
      const v = this.vectors.get(t);
      if (!v) throw new Error(`no precomputed vector for ${JSON.stringify(t)}`);
      return v;
    });
  }
  async close(): Promise<void> {}
}

interface Latency {
  p50_ms: number;
  p95_ms: number;
}
interface ProfileFigures {
  load_per_s: number;
  disk_bytes: number;
  knn: Record<'none' | 'wing95' | 'room2', Latency & { recall_at_20: number }>;
  lexical: Latency;
  union: Latency;
}
type Figures = Record<'cluster' | 'embedded', Partial<ProfileFigures>>;

const round = (x: number, digits: number) => Number(x.toFixed(digits));
const figures = (t: number[]): Latency => ({ p50_ms: round(percentile(t, 0.5), 2), p95_ms: round(percentile(t, 0.95), 2) });

function directoryBytes(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce(
    (sum, e) => sum + (e.isDirectory() ? directoryBytes(join(dir, e.name)) : statSync(join(dir, e.name)).size),
    0,
  );
}

const fmt = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));

async function timed<T>(times: number[], fn: () => Promise<T>): Promise<T> {
  const t = performance.now();
  const out = await fn();
  times.push(performance.now() - t);
  return out;
}

function line(lines: string[], what: string, embedded: string, opensearch: string): void {
  lines.push(`| ${what} | ${embedded} | ${opensearch} |`);
  console.error(lines[lines.length - 1]);
}

const latency = (t: number[]) => `p50 ${fmt(percentile(t, 0.5))} ms, p95 ${fmt(percentile(t, 0.95))} ms`;

async function openOs(refresh: RefreshPolicy): Promise<OpenSearchDrawerIndex> {
  return OpenSearchDrawerIndex.open({ url: config.opensearch.url, palaceName: `bench-${randomBytes(4).toString('hex')}`, refresh, requestTimeoutMs: 120_000 });
}

async function dropOs(index: OpenSearchDrawerIndex): Promise<void> {
  await dropPalaceIndices(index.connection);
  await index.close();
}

/** Write cost per refresh policy: 10 bulk batches of 500 and 50 single-drawer writes. */
async function refreshPolicies(rows: DrawerWrite[], lines: string[]): Promise<void> {
  for (const policy of [true, 'wait_for', false] as const) {
    const index = await openOs(policy);
    try {
      let t = performance.now();
      for (let i = 0; i < 10 * BATCH; i += BATCH) await index.upsert(rows.slice(i, i + BATCH));
      const bulkRate = (10 * BATCH) / ((performance.now() - t) / 1000);
      const single: number[] = [];
      for (let i = 0; i < 50; i++) await timed(single, () => index.upsert([rows[10 * BATCH + i]!]));
      t = performance.now();
      if (policy === false) await index.refresh();
      line(lines, `refresh ${JSON.stringify(policy)}: 5 000 drawers in batches of ${BATCH} / one-drawer write`, '—',
        `${Math.round(bulkRate)} drawers/s / ${latency(single)}`);
    } finally {
      await dropOs(index);
    }
  }
}

/** Upserts `rows` in batches with `inFlight` requests at once, logging the rate every 50 000 rows. */
async function load(name: string, store: DrawerStore, rows: DrawerWrite[], inFlight: number): Promise<void> {
  const started = performance.now();
  let next = 0;
  let done = 0;
  const lane = async () => {
    while (next < rows.length) {
      const from = next;
      next += BATCH;
      await store.upsert(rows.slice(from, from + BATCH));
      done += Math.min(BATCH, rows.length - from);
      if (done % 50_000 === 0) console.error(`${name}: ${done} drawers, ${Math.round(done / ((performance.now() - started) / 1000))}/s so far`);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
}

async function measure(n: number, lines: string[], out: Figures): Promise<void> {
  const { rows, centers } = corpus(n);
  const dir = mkdtempSync(join(os.tmpdir(), 'opensearch-bench-'));
  const embedded = await openSqliteDrawerIndex(dir);
  const cluster = await openOs(false);
  try {
    let t = performance.now();
    await withBulkLoadSettings(cluster.connection, `${cluster.connection.prefix}-drawers-v1`, () => load('opensearch', cluster, rows, IN_FLIGHT));
    const osMs = performance.now() - t;
    t = performance.now();
    await load('embedded', embedded, rows, 1);
    const emMs = performance.now() - t;
    line(
      lines,
      `${n} drawers: bulk index in batches of ${BATCH}`,
      `${Math.round(n / (emMs / 1000))} drawers/s (${(emMs / 1000).toFixed(0)} s)`,
      `${Math.round(n / (osMs / 1000))} drawers/s (${
        (osMs / 1000).toFixed(0)
      } s; ${IN_FLIGHT} requests in flight, bulk-load settings: no refresh until the end, async translog)`,
    );
    out.cluster.load_per_s = Math.round(n / (osMs / 1000));
    out.embedded.load_per_s = Math.round(n / (emMs / 1000));

    const stats = await cluster.connection.client.cat.segments({ index: `${cluster.connection.prefix}-drawers-v1`, format: 'json', bytes: 'b' });
    out.cluster.disk_bytes = (stats.body as { size: string; searchable: string }[]).filter((x) => x.searchable === 'true').reduce(
      (sum, x) => sum + Number(x.size),
      0,
    );
    out.embedded.disk_bytes = directoryBytes(dir);
    line(lines, `${n} drawers: size on disk (searchable segments; the palace directory)`, `${(out.embedded.disk_bytes / 2 ** 20).toFixed(0)} MiB`,
      `${(out.cluster.disk_bytes / 2 ** 20).toFixed(0)} MiB`);

    const minilm = new MiniLmEmbedder(config);
    const vectors = new Map((await minilm.embed(QUERIES)).map((v, i) => [QUERIES[i]!, v]));
    await minilm.close();
    const embedder = new PrecomputedEmbedder(vectors);

    const stores: [string, DrawerStore][] = [['embedded', embedded], ['opensearch', cluster]];
    const rnd0 = seededRandom(4);
    const probe = Array.from({ length: QUERIES.length }, (_, q) => nearVector(rnd0, centers[(q * 7) % centers.length]!));
    const beforeMerge: number[] = [];
    for (const q of probe) await timed(beforeMerge, () => cluster.knn(q, 20));
    const segments = await cluster.connection.client.cat.segments({ index: `${cluster.connection.prefix}-drawers-v1`, format: 'json' });
    const segmentCount = (segments.body as unknown[]).length;
    if (FORCE_MERGE) {
      t = performance.now();
      await cluster.connection.client.indices.forcemerge({ index: `${cluster.connection.prefix}-drawers-v1`, max_num_segments: 1 }, {
        requestTimeout: 3_600_000,
      });
      line(lines, `${n} drawers: knn k=20 right after the load (${segmentCount} segments); then force merge to one segment`, '—',
        `${latency(beforeMerge)}; merge ${((performance.now() - t) / 1000).toFixed(0)} s (the lines below are after it)`);
      await cluster.connection.client.indices.flush({ index: `${cluster.connection.prefix}-drawers-v1`, force: true });
    } else {
      line(lines, `${n} drawers: knn k=20 right after the load (${segmentCount} segments, no force merge: the lines below search them all)`, '—',
        latency(beforeMerge));
    }
    // Vector search alone with in-distribution queries (near the corpus's clusters), so recall
    // against an exact scan means something; the real queries below are far from every cluster.
    const rnd = seededRandom(5);
    const near = Array.from({ length: QUERIES.length }, (_, q) => nearVector(rnd, centers[(q * 13) % centers.length]!));
    const cases: [string, 'none' | 'wing95' | 'room2', DrawerFilter | undefined, (d: DrawerWrite) => boolean][] = [
      ['no filter', 'none', undefined, () => true],
      ['wing filter, 95 % of rows', 'wing95', { wing: 'common' }, (d) => d.meta.wing === 'common'],
      ['room filter, 2 % of rows', 'room2', { room: 'room_7' }, (d) => d.meta.room === 'room_7'],
    ];
    for (const [name, key, filter, keep] of cases) {
      const pool = rows.filter(keep);
      const truths = near.map((q) => new Set(bruteForce(pool, q, 20).map((b) => b.id)));
      const cells: string[] = [];
      for (const [profile, store] of stores) {
        const t2: number[] = [];
        let found = 0;
        for (const [i, q] of near.entries()) {
          const hits = await timed(t2, () => store.knn(q, 20, filter));
          found += hits.filter((h) => truths[i]!.has(h.drawer.id)).length;
        }
        const recall = found / (near.length * 20);
        cells.push(`${latency(t2)}, recall@20 ${recall.toFixed(3)}`);
        const side = out[profile === 'opensearch' ? 'cluster' : 'embedded'];
        side.knn = { ...side.knn, [key]: { ...figures(t2), recall_at_20: round(recall, 3) } } as ProfileFigures['knn'];
      }
      line(lines, `${n} drawers: knn k=20, ${name}`, cells[0]!, cells[1]!);
    }
    {
      const times = new Map<string, number[]>();
      for (const [profile, store] of stores) {
        const t2: number[] = [];
        for (const q of QUERIES) await timed(t2, () => store.lexical([...new Set(lexicalTokens(q))], 20));
        times.set(profile, t2);
        out[profile === 'opensearch' ? 'cluster' : 'embedded'].lexical = figures(t2);
      }
      line(lines, `${n} drawers: lexical k=20, tokens of a real query`, latency(times.get('embedded')!), latency(times.get('opensearch')!));
    }
    for (const strategy of ['union', 'vector'] as const) {
      const results = new Map<string, SearchResult[]>();
      const times = new Map<string, number[]>();
      for (const [profile, store] of stores) {
        const t2: number[] = [];
        const answers: SearchResult[] = [];
        for (const q of QUERIES)
          answers.push(
            await timed(t2, () =>
              search({ config, drawers: store, embedder }, { query: q, limit: 5, candidate_strategy: strategy }, { sanitize: true, defaultMaxDistance: 1.5 })),
          );
        times.set(profile, t2);
        results.set(profile, answers);
        if (strategy === 'union')
          out[profile === 'opensearch' ? 'cluster' : 'embedded'].union = figures(t2);
      }
      const same = QUERIES.filter((_, i) =>
        JSON.stringify(results.get('embedded')![i]!.results.map((r) =>
          r.drawer_id
        )) === JSON.stringify(results.get('opensearch')![i]!.results.map((r) => r.drawer_id))
      ).length;
      line(lines, `${n} drawers: palace search, ${strategy}, limit 5 (identical results: ${same}/${QUERIES.length})`, latency(times.get('embedded')!),
        latency(times.get('opensearch')!));
    }
  } finally {
    await embedded.close();
    rmSync(dir, { recursive: true, force: true });
    await dropOs(cluster);
  }
}

const sizes = process.argv.slice(2).map(Number).filter((x) => x > 0);
const FORCE_MERGE = !process.argv.includes('--no-merge');
const JSON_OUTPUT = process.argv.includes('--json');
const lines: string[] = [];
const loadAtStart = os.loadavg()[0]!;
console.error(machine());
if (!JSON_OUTPUT) await refreshPolicies(corpus(6_000).rows, lines);
const runs: ({ n: number } & Figures)[] = [];
for (const n of sizes.length ? sizes : [100_000]) {
  const out: Figures = { cluster: {}, embedded: {} };
  await measure(n, lines, out);
  runs.push({ n, ...out });
}
console.log(`${machine()}\n\n| measure | embedded (SQLite + FTS5 + HNSW) | OpenSearch k-NN (Lucene HNSW) |\n|---|---|---|\n${lines.join('\n')}`);
if (JSON_OUTPUT) {
  for (const run of runs) {
    console.log(
      JSON.stringify({ n: run.n, load_avg: { start: round(loadAtStart, 2), end: round(os.loadavg()[0]!, 2) }, cluster: run.cluster, embedded: run.embedded }),
    );
  }
}
