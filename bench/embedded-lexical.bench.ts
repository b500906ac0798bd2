/**
 * The embedded lexical leg before and after issue 27's bound (stores/embedded/drawers/fts-lexical.ts),
 * on one palace of mined text (bench/lib/mined-text-corpus.ts) and in one process. Each held-out
 * query runs through three fetches, one after the other (rotating which goes first), so all see
 * the same machine load: the former query (the adapter's before the bound: counts read per call,
 * every matching row joined to its drawer and ranked), the current code with no scoring budget
 * (its exact plan), and the adapter (bounded above the exact-scan bound and the budget); then a
 * palace search (union, limit 5) with each as its lexical leg. Reports p50/p95 after 20 warm-up
 * queries, how many answers equal the exact plan's, and the bounded leg's overlap@k with it.
 *
 *   npx tsx bench/embedded-lexical.bench.ts 100000 [--palace DIR] [--lexical-only]
 *
 * With `--palace DIR` the palace is kept in DIR (with its held-out queries), and a later run
 * naming the same DIR and size measures it again without loading: a million drawers load in
 * ~15 minutes here, and building its graph on a shared machine took longer. `--lexical-only`
 * skips the palace searches, and with a kept palace does not open the adapter (nor its graph).
 */
import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../app/config.js';
import type { Drawer } from '../core/drawer.js';
import { lexicalTokens } from '../core/lexical.js';
import { search } from '../palace/search/search.js';
import type { SearchResult } from '../palace/search/search.js';
import { DRAWER_DB_FILE } from '../stores/embedded/drawers/drawer-db.js';
import { DRAWER_COLUMNS, rowToDrawer } from '../stores/embedded/drawers/rows.js';
import type { DrawerRow } from '../stores/embedded/drawers/rows.js';
import { filterCondition } from '../stores/embedded/drawers/filter-sql.js';
import { lexicalSeqs } from '../stores/embedded/drawers/fts-lexical.js';
import { FtsStatistics } from '../stores/embedded/drawers/fts-statistics.js';
import { FTS_VOCABULARY } from '../stores/embedded/drawers/schema.js';
import { openSqliteDrawerIndex } from '../stores/embedded/drawers/sqlite-drawer-index.js';
import type { DrawerFilter } from '../stores/ports/drawers/drawer-index.js';
import type { DrawerStore } from '../stores/ports/palace-stores.js';
import { asciiLower, informativeTokenPositions } from '../stores/shared/drawers/lexical-tokens.js';
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

const LEXICAL_ONLY = process.argv.includes('--lexical-only');

const dir = kept ?? mkdtempSync(join(os.tmpdir(), 'embedded-lexical-bench-'));
const queriesFile = join(dir, `queries-${n}.json`);
// The lexical lines read the palace through a connection of their own; only loading and the
// palace searches need the adapter (and its graph, built on open when it lags the rows).
const index = LEXICAL_ONLY && existsSync(queriesFile) ? undefined : await openSqliteDrawerIndex(dir);
try {
  if (index !== undefined && !existsSync(queriesFile)) {
    const corpus = minedTextCorpus(n, [REPOSITORY, join(REPOSITORY, 'node_modules')]);
    const started = performance.now();
    for (const batch of corpus.drawers(500)) await index.upsert(batch);
    console.error(`${n} drawers loaded in ${((performance.now() - started) / 1000).toFixed(0)} s; ${corpus.queries.length} held-out queries`);
    writeFileSync(queriesFile, JSON.stringify(corpus.queries));
  }
  const queries = (JSON.parse(readFileSync(queriesFile, 'utf8')) as string[]).slice(0, WARM_UP + QUERY_COUNT);
  if (queries.length < WARM_UP + QUERY_COUNT) throw new Error(`only ${queries.length} held-out queries; a larger corpus is needed`);
  const db = new Database(join(dir, DRAWER_DB_FILE), { readonly: true });
  db.exec(`CREATE VIRTUAL TABLE temp.${FTS_VOCABULARY} USING fts5vocab(main, drawer_fts, 'row')`);
  const rowCount = db.prepare('SELECT count(*) FROM drawers').pluck().get() as number;
  if (rowCount !== n) throw new Error(`${dir} holds ${rowCount} drawers, not ${n}`);
  const read = (seqs: number[]) =>
    (db.prepare(`SELECT ${DRAWER_COLUMNS} FROM json_each(?) AS j CROSS JOIN drawers d ON d.seq = j.value ORDER BY j.key`).all(
      JSON.stringify(seqs),
    ) as DrawerRow[])
      .map(rowToDrawer);
  const withTokens =
    (fetch: (unique: string[], k: number, filter?: DrawerFilter) => number[]) => async (tokens: string[], k: number, filter?: DrawerFilter) => {
      const unique = [...new Set(tokens.filter((t) => t.trim() !== ''))];
      return unique.length === 0 ? [] : read(fetch(unique, k, filter));
    };
  /** The adapter's query before issue 27's bound: counts read per call, every matching row joined to its drawer and ranked. */
  const formerLexical = withTokens((unique, k, filter) => {
    const rows = db.prepare('SELECT count(*) FROM drawers').pluck().get() as number;
    const frequency = db.prepare(`SELECT doc FROM temp.${FTS_VOCABULARY} WHERE term = ?`).pluck();
    const kept = informativeTokenPositions(unique.map((t) => (frequency.get(asciiLower(t)) as number | undefined) ?? 0), rows);
    const cond = filterCondition(filter);
    return db
      .prepare(
        `SELECT d.seq FROM drawer_fts JOIN drawers d ON d.seq = drawer_fts.rowid WHERE drawer_fts MATCH ? AND ${cond.sql} ORDER BY bm25(drawer_fts), d.id LIMIT ?`,
      )
      .pluck()
      .all(kept.map((i) => `"${unique[i]!.replaceAll('"', '""')}"`).join(' OR '), ...cond.params, k) as number[];
  });
  /** The current fetch without a scoring budget: its plan is always the exact one. */
  const exactStatistics = new FtsStatistics(db);
  const exactLexical = withTokens((unique, k, filter) => lexicalSeqs(db, exactStatistics, unique, k, filter, Infinity));
  /** What the adapter's `lexical` runs, on this connection. */
  const boundedStatistics = new FtsStatistics(db);
  const boundedLexical = withTokens((unique, k, filter) => lexicalSeqs(db, boundedStatistics, unique, k, filter));

  const VARIANTS = ['former', 'exact', 'bounded'] as const;
  type Variant = (typeof VARIANTS)[number];
  /** Times every variant on every query, rotating which runs first. */
  const compare = async <T>(run: Record<Variant, (q: string) => Promise<T>>) => {
    const times: Record<Variant, number[]> = { former: [], exact: [], bounded: [] };
    const answers: Record<Variant, T>[] = [];
    for (const [i, q] of queries.entries()) {
      const got = {} as Record<Variant, T>;
      for (let j = 0; j < VARIANTS.length; j++) {
        const variant = VARIANTS[(i + j) % VARIANTS.length]!;
        const t = performance.now();
        got[variant] = await run[variant](q);
        if (i >= WARM_UP) times[variant].push(performance.now() - t);
      }
      if (i >= WARM_UP) answers.push(got);
    }
    return { times, answers };
  };
  const fmt = (t: number[]) => `p50 ${percentile(t, 0.5).toFixed(1)} ms, p95 ${percentile(t, 0.95).toFixed(1)} ms`;
  const loadAtStart = os.loadavg()[0]!;

  const tokensOf = (q: string) => [...new Set(lexicalTokens(q))];
  const lexical = await compare({
    former: (q) => formerLexical(tokensOf(q), K),
    exact: (q) => exactLexical(tokensOf(q), K),
    bounded: (q) => boundedLexical(tokensOf(q), K),
  });
  const same = <T>(answers: Record<Variant, T>[], a: Variant, b: Variant, key: (x: T) => string) => answers.filter((x) => key(x[a]) === key(x[b])).length;
  const lexicalIds = (found: Drawer[]) => JSON.stringify(found.map((d) => d.id));
  let overlap = 0;
  for (const { exact, bounded } of lexical.answers) {
    const truth = new Set(exact.map((d) => d.id));
    overlap += exact.length === 0 ? 1 : bounded.filter((d) => truth.has(d.id)).length / exact.length;
  }
  const union = index === undefined ? undefined : await (async () => {
    const storeWith = (lexical: DrawerStore['lexical']): DrawerStore => Object.assign(Object.create(index) as DrawerStore, { lexical });
    const config = loadConfig();
    const embedder = await PrecomputedEmbedder.of(config, queries);
    const searchOf = (store: DrawerStore) => (q: string) =>
      search({ config, drawers: store, embedder }, { query: q, limit: 5, candidate_strategy: 'union' }, { sanitize: true, defaultMaxDistance: 1.5 });
    return compare({ former: searchOf(storeWith(formerLexical)), exact: searchOf(storeWith(exactLexical)), bounded: searchOf(index) });
  })();
  const unionIds = (r: SearchResult) => JSON.stringify(r.results.map((x) => x.drawer_id));
  db.close();

  console.log(machine());
  console.log(
    `${n} drawers of mined text, ${QUERY_COUNT} queries after ${WARM_UP} warm-up; load average ${loadAtStart.toFixed(1)} → ${os.loadavg()[0]!.toFixed(1)}`,
  );
  console.log(`| measure | former query | exact plan | bounded (adapter) |\n|---|---|---|---|`);
  console.log(`| lexical k=${K} | ${fmt(lexical.times.former)} | ${fmt(lexical.times.exact)} | ${fmt(lexical.times.bounded)} |`);
  console.log(
    `| lexical k=${K}: identical to the exact plan's list; mean overlap@${K} with it | ${
      same(lexical.answers, 'former', 'exact', lexicalIds)
    }/${QUERY_COUNT} | — | ${same(lexical.answers, 'bounded', 'exact', lexicalIds)}/${QUERY_COUNT}; ${(overlap / QUERY_COUNT).toFixed(3)} |`,
  );
  if (union !== undefined) {
    console.log(`| palace search, union, limit 5 | ${fmt(union.times.former)} | ${fmt(union.times.exact)} | ${fmt(union.times.bounded)} |`);
    console.log(
      `| palace search, union, limit 5: identical to the exact plan's results | ${same(union.answers, 'former', 'exact', unionIds)}/${QUERY_COUNT} | — | ${
        same(union.answers, 'bounded', 'exact', unionIds)
      }/${QUERY_COUNT} |`,
    );
  }
} finally {
  await index?.close();
  if (kept === undefined) rmSync(dir, { recursive: true, force: true });
}
