/**
 * Drawers on OpenSearch vs the embedded profile, on the same data: bulk indexing rate, the cost
 * of each refresh policy, and search latency (p50/p95) at 100k drawers. The drawers' texts are
 * chunks of real files (this repository and its node_modules, cut by the miner's chunker), their
 * vectors synthetic (bench/lib/mined-text-corpus.ts), streamed so this process never holds the
 * corpus. The lexical and union queries come from held-out chunks and are embedded once with
 * MiniLM up front, so latencies are the stores' work plus the product's rerank, not the model's;
 * the knn lines use in-distribution vectors with recall against an exact scan. Every line runs
 * 20 warm-up queries, then times 300. Also reports how often both profiles returned exactly the
 * same results (at this size both vector searches are approximate).
 *
 *   source deploy/local/env.sh && npx tsx bench/opensearch.bench.ts            # 100 000 drawers
 *   npx tsx bench/opensearch.bench.ts 20000                                    # another size
 *   npx tsx bench/opensearch.bench.ts 1000000 --no-merge                       # keep the load's segments
 *   npx tsx bench/opensearch.bench.ts 100000 --json                            # figures as JSON, last line
 *   npx tsx bench/opensearch.bench.ts 100000 --json --embedded-only            # no OpenSearch needed
 *   npx tsx bench/opensearch.bench.ts 100000 --json --skip-knn                 # lexical and union lines only
 *   npx tsx bench/opensearch.bench.ts 1000000 --json --cluster-only            # no embedded palace
 *   npx tsx bench/opensearch.bench.ts 1000000 --json --cluster-only --ef 100,200,400   # and at other HNSW ef values
 *
 * With `--json` the refresh-policy lines are skipped and the last line of stdout is one object,
 * `{"n", "load_avg", "cluster": P, "embedded": P}`, each P `{"load_per_s", "disk_bytes", "knn":
 * {"none", "wing95", "room2"} each {"p50_ms", "p95_ms", "recall_at_20"}, "lexical": {"p50_ms",
 * "p95_ms"}, "union": {"p50_ms", "p95_ms"}}` (issue 27), and for OpenSearch `"union_variants": {"pool", "separate"}` each
 * {"p50_ms", "p95_ms", "round_trips"} plus `"identical"` (the union search through candidatePool and
 * through the separate calls, query by query side by side) and `"knn_after_load"` (the knn lines
 * right after the load, over the segments it left, with their count), so two runs compare field by field;
 * `load_avg` is the 1-minute load average at the start and at the end of the run.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../app/config.js';
import type { DrawerWrite } from '../core/drawer.js';
import { lexicalTokens } from '../core/lexical.js';
import { search } from '../palace/search/search.js';
import type { SearchResult } from '../palace/search/search.js';
import { openSqliteDrawerIndex } from '../stores/embedded/drawers/sqlite-drawer-index.js';
import { dropPalaceIndices, withBulkLoadSettings } from '../stores/opensearch/drawer-mapping.js';
import { OpenSearchDrawerIndex } from '../stores/opensearch/opensearch-drawer-index.js';
import type { RefreshPolicy } from '../stores/opensearch/drawer-indices.js';
import type { DrawerFilter } from '../stores/ports/drawers/drawer-index.js';
import type { DrawerStore } from '../stores/ports/palace-stores.js';
import { poolOfParts } from '../stores/shared/drawers/pool-of-parts.js';
import { withOverrides } from '../app/access/with-overrides.js';
import { nearVector, seededRandom } from '../tests/contract/drawer-index.fixtures.js';
import { minedTextCorpus } from './lib/mined-text-corpus.js';
import { PrecomputedEmbedder } from './lib/precomputed-embedder.js';
import { correctHits, exactTruths } from './lib/exact-truths.js';
import type { FilterCase, Truth } from './lib/exact-truths.js';
import { listFlag } from './lib/args.js';
import { machine, percentile } from './lib/stats.js';

const BATCH = 500;
/** Bulk requests in flight during a load: one per core of this machine's OpenSearch node. */
const IN_FLIGHT = 2;
const config = loadConfig();
/** The held-out queries' vectors of the size being measured. */
let precomputed: PrecomputedEmbedder | undefined;

/** Queries per line after the warm-up, and the warm-up queries run first and not timed. */
const QUERY_COUNT = 300;
const WARM_UP = 20;
const REPOSITORY = join(import.meta.dirname, '..');
const corpus = (n: number) => minedTextCorpus(n, [REPOSITORY, join(REPOSITORY, 'node_modules')]);

interface Latency {
  p50_ms: number;
  p95_ms: number;
}
interface UnionVariants {
  pool: Latency & { round_trips: number };
  separate: Latency & { round_trips: number };
}
interface ProfileFigures {
  load_per_s: number;
  disk_bytes: number;
  knn: Record<'none' | 'wing95' | 'room2', Latency & { recall_at_20: number }>;
  lexical: Latency;
  union: Latency;
  /** OpenSearch only: the union search by candidatePool and by the separate calls, side by side, and how many of their results were identical. */
  union_variants: UnionVariants & { identical: number };
  /** OpenSearch only: the knn lines right after the load, while its background merge runs, over the segments it left. */
  knn_after_load: { segments: number } & ProfileFigures['knn'];
  /** OpenSearch only, with `--ef`: the knn lines and the union search again at each HNSW candidate count. */
  ef_sweep: ({ ef: number; union: Latency } & Pick<ProfileFigures, 'knn'>)[];
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

/** Runs `fn` on every item: the first WARM_UP untimed, the rest timed into the returned list. */
async function timedAfterWarmUp<I, T>(items: readonly I[], fn: (item: I, i: number) => Promise<T>): Promise<{ times: number[]; answers: T[] }> {
  const times: number[] = [];
  const answers: T[] = [];
  for (const [i, item] of items.entries()) {
    if (i < WARM_UP) await fn(item, i);
    else answers.push(await timed(times, () => fn(item, i)));
  }
  return { times, answers };
}

function line(lines: string[], what: string, embedded: string, opensearch: string): void {
  lines.push(`| ${what} | ${embedded} | ${opensearch} |`);
  console.error(lines[lines.length - 1]);
}

const latency = (t: number[]) => `p50 ${fmt(percentile(t, 0.5))} ms, p95 ${fmt(percentile(t, 0.95))} ms`;

async function openOs(refresh: RefreshPolicy, palaceName = `bench-${randomBytes(4).toString('hex')}`,
  efSearch = config.opensearch.efSearch): Promise<OpenSearchDrawerIndex> {
  return OpenSearchDrawerIndex.open({ url: config.opensearch.url, palaceName, refresh, requestTimeoutMs: 120_000, efSearch });
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

/** Upserts the streamed batches with `inFlight` requests at once, logging the rate every 50 000 rows. */
async function load(name: string, store: DrawerStore, batches: Iterator<DrawerWrite[]>, inFlight: number): Promise<void> {
  const started = performance.now();
  let done = 0;
  let logged = 0;
  const lane = async () => {
    for (let next = batches.next(); !next.done; next = batches.next()) {
      await store.upsert(next.value);
      done += next.value.length;
      if (done - logged >= 50_000) {
        logged = done;
        console.error(`${name}: ${done} drawers, ${Math.round(done / ((performance.now() - started) / 1000))}/s so far`);
      }
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
}

function searchOf(store: DrawerStore, query: string, strategy: 'union' | 'vector'): Promise<SearchResult> {
  return search({ config, drawers: store, embedder: precomputed! }, { query, limit: 5, candidate_strategy: strategy }, { sanitize: true,
    defaultMaxDistance: 1.5 });
}

/**
 * The union search on OpenSearch two ways, query by query in alternating order so both see the
 * same load: the pool in one `_msearch` and one fetch (the adapter's candidatePool), and the
 * separate calls one after the other (knn, lexical, the lexical rows' vectors, count: the search
 * path before candidatePool), with the HTTP requests each made.
 */
async function unionSideBySide(n: number, cluster: OpenSearchDrawerIndex, queries: readonly string[], lines: string[], out: Figures): Promise<void> {
  const separate = withOverrides<DrawerStore>(cluster, { candidatePool: (request) => poolOfParts(cluster, request) });
  const variants: [keyof UnionVariants, DrawerStore][] = [['pool', cluster], ['separate', separate]];
  let requests = 0;
  cluster.connection.client.on('response', () => requests++);
  const times = { pool: [] as number[], separate: [] as number[] };
  const trips = { pool: [] as number[], separate: [] as number[] };
  let identical = 0;
  for (const [i, q] of queries.entries()) {
    const answers: Partial<Record<keyof UnionVariants, string>> = {};
    for (const [name, store] of i % 2 === 0 ? variants : [...variants].reverse()) {
      requests = 0;
      const t = performance.now();
      const result = await searchOf(store, q, 'union');
      if (i < WARM_UP) continue;
      times[name].push(performance.now() - t);
      trips[name].push(requests);
      answers[name] = JSON.stringify(result);
    }
    if (i >= WARM_UP && answers.pool === answers.separate) identical++;
  }
  const mean = (xs: number[]) => round(xs.reduce((a, b) => a + b, 0) / xs.length, 2);
  out.cluster.union_variants = {
    pool: { ...figures(times.pool), round_trips: mean(trips.pool) },
    separate: { ...figures(times.separate), round_trips: mean(trips.separate) },
    identical: identical,
  };
  const cell = (name: keyof UnionVariants) =>
    `${latency(times[name])}, ${mean(trips[name])} requests per search (${Math.min(...trips[name])}–${Math.max(...trips[name])})`;
  line(lines, `${n} drawers: OpenSearch union search, limit 5, pool in one _msearch / separate calls (identical results ${identical}/${QUERY_COUNT})`,
    cell('pool'), cell('separate'));
}

async function measure(n: number, lines: string[], out: Figures): Promise<void> {
  const data = corpus(n);
  const dir = mkdtempSync(join(os.tmpdir(), 'opensearch-bench-'));
  const embedded = CLUSTER_ONLY ? undefined : await openSqliteDrawerIndex(dir);
  const cluster = EMBEDDED_ONLY ? undefined : await openOs(false);
  const drawersIndex = cluster && `${cluster.connection.prefix}-drawers-v1`;
  try {
    let t = performance.now();
    let emCell = '—';
    if (embedded) {
      await load('embedded', embedded, data.drawers(BATCH), 1);
      const emMs = performance.now() - t;
      out.embedded.load_per_s = Math.round(n / (emMs / 1000));
      emCell = `${out.embedded.load_per_s} drawers/s (${(emMs / 1000).toFixed(0)} s)`;
    }
    let osCell = '—';
    if (cluster) {
      t = performance.now();
      await withBulkLoadSettings(cluster.connection, `${cluster.connection.prefix}-drawers-v1`, () =>
        load('opensearch', cluster, data.drawers(BATCH), IN_FLIGHT));
      const osMs = performance.now() - t;
      out.cluster.load_per_s = Math.round(n / (osMs / 1000));
      osCell = `${out.cluster.load_per_s} drawers/s (${(osMs / 1000).toFixed(0)} s; ${IN_FLIGHT} requests in flight, bulk-load settings)`;
    }
    console.error(`corpus: ${data.summary.chunksWalked} chunks walked in ${data.summary.passes} pass(es), ${data.queries.length} held-out queries`);
    line(lines, `${n} drawers: bulk index in batches of ${BATCH}`, emCell, osCell);
    if (embedded) out.embedded.disk_bytes = directoryBytes(dir);

    const queries = data.queries.slice(0, WARM_UP + QUERY_COUNT);
    if (queries.length < WARM_UP + QUERY_COUNT) throw new Error(`only ${queries.length} held-out queries; a larger corpus is needed`);
    precomputed = await PrecomputedEmbedder.of(config, queries);

    const stores: [string, DrawerStore][] = [...(embedded ? [['embedded', embedded] as [string, DrawerStore]] : []),
      ...(cluster ? [['opensearch', cluster] as [string, DrawerStore]] : [])];
    const cell = (profile: string, cells: Map<string, string>) => cells.get(profile) ?? '—';
    // Vector search alone with in-distribution queries (near the corpus's clusters), so recall
    // against an exact scan means something; the held-out text queries are far from every cluster.
    const rnd = seededRandom(5);
    const near = Array.from({ length: WARM_UP + QUERY_COUNT }, (_, q) => nearVector(rnd, data.centers[(q * 13) % data.centers.length]!));
    let truths: Record<FilterCase, Truth[]> | undefined;
    if (!SKIP_KNN) {
      t = performance.now();
      truths = exactTruths(data.vectors(), near.slice(WARM_UP));
      console.error(`exact top-20 of ${QUERY_COUNT} queries × 3 filters: ${((performance.now() - t) / 1000).toFixed(0)} s`);
    }
    const knnCases = async (what: string, on: [string, DrawerStore][]): Promise<Map<string, ProfileFigures['knn']>> => {
      const byProfile = new Map<string, ProfileFigures['knn']>();
      for (const [name, key, filter] of KNN_CASES) {
        const cells = new Map<string, string>();
        for (const [profile, store] of on) {
          const { times, answers } = await timedAfterWarmUp(near, (q) => store.knn(q, 20, filter));
          const found = answers.reduce((sum, hits, i) => sum + correctHits(truths![key][i]!, hits.map((h) => ({ id: h.drawer.id, distance: h.distance }))), 0);
          const recall = found / (QUERY_COUNT * 20);
          cells.set(profile, `${latency(times)}, recall@20 ${recall.toFixed(3)}`);
          byProfile.set(profile, { ...byProfile.get(profile), [key]: { ...figures(times), recall_at_20: round(recall, 3) } } as ProfileFigures['knn']);
        }
        line(lines, `${n} drawers: knn k=20, ${name}${what}`, cell('embedded', cells), cell('opensearch', cells));
      }
      return byProfile;
    };
    if (cluster && drawersIndex) {
      const segmentCount = async () => ((await cluster.connection.client.cat.segments({ index: drawersIndex, format: 'json' })).body as unknown[]).length;
      const segments = await segmentCount();
      if (truths) {
        // The state a search meets between the end of a load and the end of its background merge.
        const after = await knnCases(` (right after the load: ${segments} segments, background merge running)`, [['opensearch', cluster]]);
        out.cluster.knn_after_load = { segments, ...after.get('opensearch')! };
        console.error(`segments at the end of those lines: ${await segmentCount()}`);
      }
      if (FORCE_MERGE) {
        t = performance.now();
        await cluster.connection.client.indices.forcemerge({ index: drawersIndex, max_num_segments: 1 }, { requestTimeout: 3 * 3_600_000 });
        // The request may return while the load's background merge still runs: wait until searches
        // see one segment. A refresh also lets the searcher drop the segments the merge replaced,
        // whose files stay on disk until then.
        for (;;) {
          await cluster.connection.client.indices.flush({ index: drawersIndex, force: true });
          await cluster.connection.client.indices.refresh({ index: drawersIndex });
          if (await segmentCount() <= 1) break;
          await new Promise((resolve) => setTimeout(resolve, 2_000));
        }
        line(lines, `${n} drawers: force merge to one segment (waits for the load's background merge; the lines below are after it)`, '—',
          `${((performance.now() - t) / 1000).toFixed(0)} s`);
      }
      await cluster.connection.client.indices.refresh({ index: drawersIndex });
      const stats = await cluster.connection.client.indices.stats({ index: drawersIndex, metric: 'store' });
      out.cluster.disk_bytes = (stats.body as { _all: { primaries: { store: { size_in_bytes: number } } } })._all.primaries.store.size_in_bytes;
    }
    line(lines, `${n} drawers: size on disk (the palace directory; the index's store after the merge and a flush)`,
      out.embedded.disk_bytes === undefined ? '—' : `${(out.embedded.disk_bytes / 2 ** 20).toFixed(0)} MiB`,
      out.cluster.disk_bytes === undefined ? '—' : `${(out.cluster.disk_bytes / 2 ** 20).toFixed(0)} MiB`);
    if (truths) {
      for (const [profile, knn] of await knnCases('', stores)) out[profile === 'opensearch' ? 'cluster' : 'embedded'].knn = knn;
    }
    {
      const cells = new Map<string, string>();
      for (const [profile, store] of stores) {
        const { times } = await timedAfterWarmUp(queries, (q) => store.lexical([...new Set(lexicalTokens(q))], 20));
        cells.set(profile, latency(times));
        out[profile === 'opensearch' ? 'cluster' : 'embedded'].lexical = figures(times);
      }
      line(lines, `${n} drawers: lexical k=20, tokens of a held-out query`, cell('embedded', cells), cell('opensearch', cells));
    }
    for (const strategy of ['union', 'vector'] as const) {
      const results = new Map<string, SearchResult[]>();
      const cells = new Map<string, string>();
      for (const [profile, store] of stores) {
        const { times, answers } = await timedAfterWarmUp(queries, (q) => searchOf(store, q, strategy));
        cells.set(profile, latency(times));
        results.set(profile, answers);
        if (strategy === 'union')
          out[profile === 'opensearch' ? 'cluster' : 'embedded'].union = figures(times);
      }
      const ids = (r: SearchResult) => JSON.stringify(r.results.map((x) => x.drawer_id));
      const same = cluster && embedded ? results.get('embedded')!.filter((r, i) => ids(r) === ids(results.get('opensearch')![i]!)).length : undefined;
      line(lines, `${n} drawers: palace search, ${strategy}, limit 5${same === undefined ? '' : ` (identical results: ${same}/${QUERY_COUNT})`}`,
        cell('embedded', cells), cell('opensearch', cells));
    }
    if (cluster) await unionSideBySide(n, cluster, queries, lines, out);
    if (cluster && truths) {
      out.cluster.ef_sweep = [];
      for (const ef of EF_SWEEP) {
        const atEf = await openOs(false, cluster.connection.options.palaceName, ef);
        try {
          const knn = (await knnCases(` (ef ${ef})`, [['opensearch', atEf]])).get('opensearch')!;
          const { times } = await timedAfterWarmUp(queries, (q) => searchOf(atEf, q, 'union'));
          line(lines, `${n} drawers: palace search, union, limit 5 (ef ${ef})`, '—', latency(times));
          out.cluster.ef_sweep.push({ ef, knn, union: figures(times) });
        } finally {
          await atEf.close();
        }
      }
    }
  } finally {
    await embedded?.close();
    rmSync(dir, { recursive: true, force: true });
    if (cluster) await dropOs(cluster);
  }
}

const sizes = process.argv.slice(2).map(Number).filter((x) => x > 0);
const FORCE_MERGE = !process.argv.includes('--no-merge');
const JSON_OUTPUT = process.argv.includes('--json');
const EMBEDDED_ONLY = process.argv.includes('--embedded-only');
/** No embedded palace: for sizes whose embedded figures come from bench/embedded-lexical.bench.ts (its 1M graph build takes an hour). */
const CLUSTER_ONLY = process.argv.includes('--cluster-only');
/** `--ef 100,200,400`: HNSW candidate counts the knn lines and the union search run at again, after the others. */
const EF_SWEEP = listFlag('--ef').map(Number);
const KNN_CASES: [string, FilterCase, DrawerFilter | undefined][] = [
  ['no filter', 'none', undefined],
  ['wing filter, 95 % of rows', 'wing95', { wing: 'common' }],
  ['room filter, 2 % of rows', 'room2', { room: 'room_7' }],
];
/** Leaves out the knn lines and their exact-scan truths (minutes per 100k rows on a loaded machine). */
const SKIP_KNN = process.argv.includes('--skip-knn');
const lines: string[] = [];
const loadAtStart = os.loadavg()[0]!;
console.error(machine());
if (!JSON_OUTPUT && !EMBEDDED_ONLY && !CLUSTER_ONLY) await refreshPolicies([...corpus(6_000).drawers(6_000)].flat(), lines);
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
