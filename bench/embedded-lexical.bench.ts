/**
 * The embedded lexical leg before and after it ranks on (seq, score, id) alone and reads only
 * the k winners' rows, on one palace of mined text (bench/lib/mined-text-corpus.ts) and in one
 * process: each held-out query runs through the adapter's former query (every column of every
 * matching row through SQLite's sorter) and through the adapter, one after the other, so both
 * see the same machine load. Reports p50/p95 of each after 20 warm-up queries, and how many of
 * the answers are identical (all must be).
 *
 *   npx tsx bench/embedded-lexical.bench.ts 100000 [k]     # k: candidates asked for, 20 by default
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { lexicalTokens } from '../core/lexical.js';
import { DRAWER_DB_FILE } from '../stores/embedded/drawers/drawer-db.js';
import { openSqliteDrawerIndex } from '../stores/embedded/drawers/sqlite-drawer-index.js';
import { asciiLower, informativeTokenPositions } from '../stores/shared/drawers/lexical-tokens.js';
import { minedTextCorpus } from './lib/mined-text-corpus.js';
import { machine, percentile } from './lib/stats.js';

const n = Number(process.argv[2] ?? 100_000);
const k = Number(process.argv[3] ?? 20);
const QUERY_COUNT = 300;
const WARM_UP = 20;
const REPOSITORY = join(import.meta.dirname, '..');

const corpus = minedTextCorpus(n, [REPOSITORY, join(REPOSITORY, 'node_modules')]);
const dir = mkdtempSync(join(os.tmpdir(), 'embedded-lexical-bench-'));
const index = await openSqliteDrawerIndex(dir);
const loadAtStart = os.loadavg()[0]!;
try {
  const started = performance.now();
  for (const batch of corpus.drawers(500)) await index.upsert(batch);
  console.error(`${n} drawers loaded in ${((performance.now() - started) / 1000).toFixed(0)} s; ${corpus.queries.length} held-out queries`);
  const queries = corpus.queries.slice(0, WARM_UP + QUERY_COUNT);
  if (queries.length < WARM_UP + QUERY_COUNT) throw new Error(`only ${queries.length} held-out queries; a larger corpus is needed`);

  const db = new Database(join(dir, DRAWER_DB_FILE), { readonly: true });
  db.exec(`CREATE VIRTUAL TABLE temp.vocabulary USING fts5vocab(main, drawer_fts, 'row')`);
  /** The adapter's former query: every column of every row matching a kept token goes through the sort. */
  const fullRanking = (tokens: string[]): string[] => {
    const rows = db.prepare('SELECT count(*) FROM drawers').pluck().get() as number;
    const documentFrequency = tokens.map((t) =>
      (db.prepare('SELECT doc FROM temp.vocabulary WHERE term = ?').pluck().get(asciiLower(t)) as number | undefined) ?? 0
    );
    const match = informativeTokenPositions(documentFrequency, rows).map((i) => `"${tokens[i]!.replaceAll('"', '""')}"`).join(' OR ');
    return db
      .prepare(
        `SELECT d.seq, d.id, d.content, d.meta FROM drawer_fts JOIN drawers d ON d.seq = drawer_fts.rowid
         WHERE drawer_fts MATCH ? ORDER BY bm25(drawer_fts), d.id LIMIT ?`,
      )
      .all(match, k)
      .map((r) => (r as { id: string }).id);
  };

  const before: number[] = [];
  const after: number[] = [];
  let identical = 0;
  for (const [i, q] of queries.entries()) {
    const tokens = [...new Set(lexicalTokens(q))];
    if (tokens.length === 0) continue;
    let t = performance.now();
    const expected = fullRanking(tokens);
    const beforeMs = performance.now() - t;
    t = performance.now();
    const got = (await index.lexical(tokens, k)).map((d) => d.id);
    const afterMs = performance.now() - t;
    if (i < WARM_UP) continue;
    before.push(beforeMs);
    after.push(afterMs);
    if (JSON.stringify(got) === JSON.stringify(expected)) identical++;
    else console.error(`differs: ${JSON.stringify(q)}`);
  }
  db.close();
  const fmt = (t: number[]) => `p50 ${percentile(t, 0.5).toFixed(1)} ms, p95 ${percentile(t, 0.95).toFixed(1)} ms`;
  console.log(machine());
  console.log(
    `${n} drawers of mined text, lexical k=${k}, ${before.length} queries after ${WARM_UP} warm-up; load average ${loadAtStart.toFixed(1)} → ${
      os.loadavg()[0]!.toFixed(1)
    }`,
  );
  console.log(`| whole rows through the sort (before) | ${fmt(before)} |`);
  console.log(`| rank on seq and id, then read k rows (after) | ${fmt(after)} |`);
  console.log(`| identical answers | ${identical}/${before.length} |`);
} finally {
  await index.close();
  rmSync(dir, { recursive: true, force: true });
}
