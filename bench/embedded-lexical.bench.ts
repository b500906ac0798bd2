/**
 * The embedded lexical leg, exact against bounded (stores/embedded/drawers/fts-lexical.ts), on
 * one palace of mined text (bench/lib/mined-text-corpus.ts) and in one process. Each held-out
 * query runs through the exact fetch (every row holding a kept token ranked by FTS5 `bm25()`,
 * the adapter's query before issue 27's bound) and through the adapter, one after the other
 * (alternating which goes first), so both see the same machine load; then the same for a palace
 * search (union, limit 5) with each lexical leg. Reports p50/p95 after 20 warm-up queries, the
 * bounded leg's overlap@k with the exact top k, and how many answers are identical.
 *
 *   npx tsx bench/embedded-lexical.bench.ts 100000 [--palace DIR]
 *
 * With `--palace DIR` the palace is kept in DIR (with its held-out queries), and a later run
 * naming the same DIR and size measures it again without loading: a million drawers load in
 * ~15 minutes here.
 */
import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../app/config.js';
import { lexicalTokens } from '../core/lexical.js';
import { search } from '../palace/search/search.js';
import type { SearchResult } from '../palace/search/search.js';
import { DRAWER_DB_FILE } from '../stores/embedded/drawers/drawer-db.js';
import { lexicalSeqs } from '../stores/embedded/drawers/fts-lexical.js';
import { FtsStatistics } from '../stores/embedded/drawers/fts-statistics.js';
import { FTS_VOCABULARY } from '../stores/embedded/drawers/schema.js';
import { openSqliteDrawerIndex } from '../stores/embedded/drawers/sqlite-drawer-index.js';
import type { DrawerFilter } from '../stores/ports/drawers/drawer-index.js';
import type { DrawerStore } from '../stores/ports/palace-stores.js';
import { minedTextCorpus } from './lib/mined-text-corpus.js';
import { PrecomputedEmbedder } from './lib/precomputed-embedder.js';
import { machine, percentile } from './lib/stats.js';

const n = Number(process.argv[2] ?? 100_000);
const palaceArg = process.argv.indexOf('--palace');
const kept = palaceArg > 0 ? process.argv[palaceArg + 1] : undefined;
const K = 20;
const QUERY_COUNT = 300;
const WARM_UP = 20;
const REPOSITORY = join(import.meta.dirname, '..');

const dir = kept ?? mkdtempSync(join(os.tmpdir(), 'embedded-lexical-bench-'));
const queriesFile = join(dir, `queries-${n}.json`);
const index = await openSqliteDrawerIndex(dir);
try {
  if (!existsSync(queriesFile)) {
    const corpus = minedTextCorpus(n, [REPOSITORY, join(REPOSITORY, 'node_modules')]);
    const started = performance.now();
    for (const batch of corpus.drawers(500)) await index.upsert(batch);
    console.error(`${n} drawers loaded in ${((performance.now() - started) / 1000).toFixed(0)} s; ${corpus.queries.length} held-out queries`);
    writeFileSync(queriesFile, JSON.stringify(corpus.queries));
  }
  const queries = (JSON.parse(readFileSync(queriesFile, 'utf8')) as string[]).slice(0, WARM_UP + QUERY_COUNT);
  if (queries.length < WARM_UP + QUERY_COUNT) throw new Error(`only ${queries.length} held-out queries; a larger corpus is needed`);
  if ((await index.count()) !== n) throw new Error(`${dir} holds ${await index.count()} drawers, not ${n}`);

  const db = new Database(join(dir, DRAWER_DB_FILE), { readonly: true });
  db.exec(`CREATE VIRTUAL TABLE temp.${FTS_VOCABULARY} USING fts5vocab(main, drawer_fts, 'row')`);
  const idOf = db.prepare('SELECT id FROM drawers WHERE seq = ?').pluck();
  const statistics = new FtsStatistics(db);
  /** The exact fetch: no scoring budget, so the plan is always the exact one. */
  const exactLexical = async (tokens: string[], k: number, filter?: DrawerFilter) => {
    const unique = [...new Set(tokens.filter((t) => t.trim() !== ''))];
    return unique.length === 0 ? [] : index.get(lexicalSeqs(db, statistics, unique, k, filter, Infinity).map((seq) => idOf.get(seq) as string));
  };
  const exactStore: DrawerStore = Object.assign(Object.create(index) as DrawerStore, { lexical: exactLexical });
  const config = loadConfig();
  const embedder = await PrecomputedEmbedder.of(config, queries);

  /** Times `exact` and `bounded` on every query, alternating which runs first. */
  const pair = async <T>(exact: (q: string) => Promise<T>, bounded: (q: string) => Promise<T>) => {
    const times = { exact: [] as number[], bounded: [] as number[] };
    const answers: [T, T][] = [];
    for (const [i, q] of queries.entries()) {
      const got = {} as { exact: T; bounded: T };
      for (const side of i % 2 === 0 ? (['exact', 'bounded'] as const) : (['bounded', 'exact'] as const)) {
        const t = performance.now();
        got[side] = await (side === 'exact' ? exact : bounded)(q);
        if (i >= WARM_UP) times[side].push(performance.now() - t);
      }
      if (i >= WARM_UP) answers.push([got.exact, got.bounded]);
    }
    return { times, answers };
  };
  const fmt = (t: number[]) => `p50 ${percentile(t, 0.5).toFixed(1)} ms, p95 ${percentile(t, 0.95).toFixed(1)} ms`;
  const loadAtStart = os.loadavg()[0]!;

  const tokensOf = (q: string) => [...new Set(lexicalTokens(q))];
  const lexical = await pair((q) => exactLexical(tokensOf(q), K), (q) => index.lexical(tokensOf(q), K));
  let overlap = 0;
  let identical = 0;
  for (const [exact, bounded] of lexical.answers) {
    const truth = new Set(exact.map((d) => d.id));
    overlap += exact.length === 0 ? 1 : bounded.filter((d) => truth.has(d.id)).length / exact.length;
    if (JSON.stringify(exact.map((d) => d.id)) === JSON.stringify(bounded.map((d) => d.id))) identical++;
  }
  const searchOf = (store: DrawerStore) => (q: string) =>
    search({ config, drawers: store, embedder }, { query: q, limit: 5, candidate_strategy: 'union' }, { sanitize: true, defaultMaxDistance: 1.5 });
  const union = await pair(searchOf(exactStore), searchOf(index));
  const ids = (r: SearchResult) => JSON.stringify(r.results.map((x) => x.drawer_id));
  const sameUnion = union.answers.filter(([exact, bounded]) => ids(exact) === ids(bounded)).length;
  db.close();

  console.log(machine());
  console.log(
    `${n} drawers of mined text, ${QUERY_COUNT} queries after ${WARM_UP} warm-up; load average ${loadAtStart.toFixed(1)} → ${os.loadavg()[0]!.toFixed(1)}`,
  );
  console.log(`| measure | exact | bounded |\n|---|---|---|`);
  console.log(`| lexical k=${K} | ${fmt(lexical.times.exact)} | ${fmt(lexical.times.bounded)} |`);
  console.log(
    `| lexical k=${K}: mean overlap@${K} with the exact top ${K}; identical lists | — | ${(overlap / QUERY_COUNT).toFixed(3)}; ${identical}/${QUERY_COUNT} |`,
  );
  console.log(`| palace search, union, limit 5 | ${fmt(union.times.exact)} | ${fmt(union.times.bounded)} |`);
  console.log(`| palace search, union, limit 5: identical results | — | ${sameUnion}/${QUERY_COUNT} |`);
} finally {
  await index.close();
  if (kept === undefined) rmSync(dir, { recursive: true, force: true });
}
