/**
 * The two profiles answer searches identically: one generated project (60 files) is mined with
 * the real MiniLM embedder through the mine activities and the local job runner into an embedded
 * palace and into an OpenSearch-backed DrawerIndex, then 20 fixed queries run through
 * palace/search/search.ts with both candidate strategies and a few filters. Results must be equal: the
 * same drawer ids in the same order, with the same distances, BM25 scores and texts.
 *
 * Why this holds rather than merely "mostly": at this size both adapters search vectors exactly
 * (the embedded one scans, the OpenSearch one makes Lucene score every filtered row), recompute
 * distances from the same stored float32 vectors with the same function, and break distance ties
 * by id; lexical candidates are chosen by the same FTS5 bm25 function over the same statistics.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJobActivities } from '../../jobs/activities.js';
import type { Runtime } from '../../palace/runtime.js';
import { openRuntime } from '../../app/runtime.js';
import { loadConfig } from '../../app/config.js';
import type { Config } from '../../core/config.js';
import { MiniLmEmbedder } from '../../embed/minilm.js';
import type { JobProgress, JobSpec, MineSpec } from '../../jobs/job.js';
import { search } from '../../palace/search/search.js';
import type { SearchInput, SearchResult } from '../../palace/search/search.js';
import { openSqliteGraphStore } from '../../stores/embedded/sqlite-graph-store.js';
import { SqliteJobStore } from '../../stores/embedded/sqlite-job-store.js';
import { openSqliteLocks } from '../../stores/embedded/sqlite-locks.js';
import { OpenSearchConnection } from '../../stores/opensearch/connection.js';
import { dropPalaceIndices } from '../../stores/opensearch/drawer-mapping.js';
import { OpenSearchDrawerIndex } from '../../stores/opensearch/opensearch-drawer-index.js';
import type { GraphStore } from '../../stores/ports/graph-store.js';
import type { JobStore } from '../../stores/ports/job-store.js';
import type { Locks } from '../../stores/ports/locks.js';
import { LocalJobEngine } from '../../jobs/engines/local/runner.js';
import { generateProject } from '../fixtures/generate-project.js';

const QUERIES = [
  'retry with backoff after a timeout',
  'how is the lease fenced when a worker dies',
  'cache shard replica',
  'which workflow activity sends the heartbeat',
  'vector lexical rerank',
  'commit branch merge review',
  'deploy rollback latency',
  'module 12',
  'Note 7 on memory budget',
  'throughput metric',
  'cursor stream event artifact',
  'drawer wing room hallway tunnel',
  'entity graph',
  'embed chunk scan manifest',
  'queue batch token session',
  'deadline',
  'index',
  'patch review for the deploy',
  'session_cache',
  'how do we measure memory and latency under load',
];

let tmp: string;
let project: string;
let config: Config;
let embedder: MiniLmEmbedder;
let embedded: Runtime;
let cluster: { drawers: OpenSearchDrawerIndex; graph: GraphStore; locks: Locks; jobs: JobStore<JobSpec, JobProgress>; engine: LocalJobEngine };
let clusterPalace: string;

const mineSpec = (): MineSpec => ({
  kind: 'mine',
  source: { kind: 'dir', path: project },
  mode: 'projects',
  agent: 'parity',
  limit: 0,
  dryRun: false,
  extract: 'exchange',
  respectGitignore: true,
  includeIgnored: [],
  wing: 'parity',
});

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mempalace-parity-'));
  project = path.join(tmp, 'project');
  await generateProject(project, 60, 7);
  clusterPalace = `parity-${randomBytes(5).toString('hex')}`;
  config = loadConfig({ ...process.env, MEMPALACE_PALACE: path.join(tmp, 'embedded') });
  embedder = new MiniLmEmbedder(config);
  embedded = await openRuntime(config, { embedder });

  // stores/open.ts has no cluster profile yet: the runtime pieces, with OpenSearch drawers and
  // the embedded locks, job store and graph (which mining touches but searching does not).
  const clusterDir = path.join(tmp, 'cluster');
  await fs.mkdir(clusterDir, { recursive: true });
  const drawers = await OpenSearchDrawerIndex.open({ url: config.opensearch.url, palaceName: clusterPalace });
  const graph = await openSqliteGraphStore(clusterDir);
  const locks = await openSqliteLocks(clusterDir);
  const jobs = new SqliteJobStore<JobSpec, JobProgress>(path.join(clusterDir, 'jobs.sqlite3'));
  const activities = createJobActivities({ config, stores: { drawers, graph, locks, jobs }, embedder, workspace: path.join(clusterDir, 'workspace') });
  const engine = new LocalJobEngine({ palace: clusterPalace, jobs, locks, activities });
  cluster = { drawers, graph, locks, jobs, engine };

  for (const jobs of [embedded.jobs, cluster.engine]) {
    const started = await jobs.start(mineSpec());
    const done = await jobs.wait(started.job_id, 240_000);
    expect(done.state).toBe('completed');
  }
}, 600_000);

afterAll(async () => {
  await cluster?.engine.close();
  await cluster?.drawers.close();
  await Promise.allSettled([cluster?.graph.close(), cluster?.locks.close(), cluster?.jobs.close()]);
  if (clusterPalace) {
    const admin = new OpenSearchConnection({ url: config.opensearch.url, palaceName: clusterPalace });
    await dropPalaceIndices(admin);
    await admin.close();
  }
  await embedded?.close();
  await embedder?.close();
  await fs.rm(tmp, { recursive: true, force: true });
});

/** The two mines ran seconds apart, so `filed_at` is the one field that differs by design. */
function withoutFilingTimes(r: SearchResult) {
  return { ...r, results: r.results.map(({ filed_at: _f, created_at: _c, ...hit }) => hit) };
}

describe('search parity: embedded SQLite vs OpenSearch', () => {
  it('both palaces hold the same drawers', async () => {
    const a = await embedded.stores.drawers.list({}, 0, 10_000);
    const b = await cluster.drawers.list({}, 0, 10_000);
    expect(a.total).toBeGreaterThan(60);
    expect(b.total).toBe(a.total);
    const ids = (p: typeof a) => p.items.map((d) => d.id).sort();
    expect(ids(b)).toEqual(ids(a));
    expect(await cluster.drawers.taxonomy()).toEqual(await embedded.stores.drawers.taxonomy());
    const sample = ids(a).slice(0, 20);
    expect(await cluster.drawers.embeddings(sample)).toEqual(await embedded.stores.drawers.embeddings(sample));
  });

  for (const strategy of ['union', 'vector'] as const) {
    it(`returns the same hits in the same order for 20 queries (${strategy})`, async () => {
      const rooms = (await embedded.stores.drawers.taxonomy()).map((t) => t.room);
      const sources = (await embedded.stores.drawers.sources({}, undefined, 100)).items.map((s) => s.source_file);
      let compared = 0;
      for (const [i, query] of QUERIES.entries()) {
        // Every fourth query is scoped, so filters take part too.
        const scope: Partial<SearchInput> = i % 4 === 1 ? { room: rooms[i % rooms.length] } : i % 4 === 3 ? { source_file: sources[i % sources.length] } : {};
        for (const limit of [5, 10]) {
          const input: SearchInput = { query, limit, candidate_strategy: strategy, ...scope };
          const opts = { sanitize: true, defaultMaxDistance: 1.5 };
          const a = await search(embedded.drawerContext, input, opts);
          const b = await search({ config, drawers: cluster.drawers, embedder }, input, opts);
          expect(b.results.map((r) => r.drawer_id), `${strategy} "${query}" limit ${limit}`).toEqual(a.results.map((r) => r.drawer_id));
          expect(withoutFilingTimes(b)).toEqual(withoutFilingTimes(a));
          compared += a.results.length;
        }
      }
      expect(compared).toBeGreaterThan(200);
    });
  }

  it('hands the product the same lexical candidates, in the same order, for common tokens', async () => {
    // A pool far smaller than the match set, so which rows make the cut depends on the ranking.
    for (const tokens of [['retry', 'backoff'], ['index'], ['the', 'cache', 'shard'], ['module', 'note']]) {
      const a = await embedded.stores.drawers.lexical(tokens, 12);
      const b = await cluster.drawers.lexical(tokens, 12);
      expect(a.length).toBe(12);
      expect(b.map((d) => d.id), tokens.join(' ')).toEqual(a.map((d) => d.id));
    }
  });
});
