/**
 * The embedded lexical fetch (stores/embedded/drawers/fts-lexical.ts): which rows it ranks, and
 * that it ranks them exactly. The bounded fetch is checked against the exact FTS5 ranking on a
 * real palace of 6,000 drawers (above the exact-scan bound) with budgets small enough to bound
 * it: its top k must be the exact top k of the rows holding the plan's rarest tokens, and with
 * no budget it must be the exact top k itself, before and after deletes, updates and
 * replacements.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRAWER_DB_FILE } from '../../stores/embedded/drawers/drawer-db.js';
import { filterCondition } from '../../stores/embedded/drawers/filter-sql.js';
import { lexicalPlan, lexicalSeqs } from '../../stores/embedded/drawers/fts-lexical.js';
import type { LexicalPlan } from '../../stores/embedded/drawers/fts-lexical.js';
import { FtsStatistics } from '../../stores/embedded/drawers/fts-statistics.js';
import { FTS_VOCABULARY } from '../../stores/embedded/drawers/schema.js';
import { SqliteDrawerIndex } from '../../stores/embedded/drawers/sqlite-drawer-index.js';
import type { DrawerFilter } from '../../stores/ports/drawers/drawer-index.js';
import { drawer, randomUnitVector, seededRandom } from '../contract/drawer-index.fixtures.js';

const rows = (entries: [string, number][]) => entries.map(([token, n]) => ({ token, rows: n }));

describe('lexicalPlan', () => {
  it('is exact at or below the exact-scan bound, whatever the budget', () => {
    expect(lexicalPlan(rows([['a', 10], ['b', 1500], ['c', 3000]]), 4000, () => 4000, 20, 1)).toEqual({ exact: true, tokens: ['a', 'b'] });
    expect(lexicalPlan(rows([['a', 10], ['b', 1500]]), 1_000_000, () => 4000, 20, 1)).toEqual({ exact: true, tokens: ['a', 'b'] });
    // The bound grows with k (exact-scan.ts): 50 rows a candidate.
    expect(lexicalPlan(rows([['a', 100], ['b', 5000]]), 1_000_000, () => 10_000, 200, 1).exact).toBe(true);
    expect(lexicalPlan(rows([['a', 100], ['b', 5000]]), 1_000_000, () => 10_001, 200, 1).exact).toBe(false);
  });

  it("is exact when every kept token's rows fit the budget", () => {
    expect(lexicalPlan(rows([['a', 100], ['b', 19_900]]), 1_000_000, () => 1_000_000, 20, 20_000)).toEqual({ exact: true, tokens: ['a', 'b'] });
  });

  it('ranks the rows holding the rarest tokens whose rows fit the budget, scored on all kept tokens, in query order', () => {
    const tokens = rows([['x', 300_000], ['y', 150], ['z', 12_000], ['w', 9000], ['common', 600_000]]);
    const expected: LexicalPlan = { exact: false, join: 'OR', essential: ['y', 'w'], rest: ['x', 'z'] };
    expect(lexicalPlan(tokens, 1_000_000, () => 1_000_000, 20, 20_000)).toEqual(expected);
  });

  it('counts the rows a filter passes only when the plan depends on them', () => {
    const uncounted = () => {
      throw new Error('counted');
    };
    expect(lexicalPlan(rows([['a', 10], ['b', 1500]]), 4000, uncounted, 20, 1).exact).toBe(true);
    expect(lexicalPlan(rows([['a', 100], ['b', 19_900]]), 1_000_000, uncounted, 20, 20_000).exact).toBe(true);
    expect(() => lexicalPlan(rows([['a', 100], ['b', 19_901]]), 1_000_000, uncounted, 20, 20_000)).toThrow('counted');
  });

  it("scales the counts by the filter's share of the rows", () => {
    const tokens = rows([['x', 300_000], ['y', 150], ['z', 12_000], ['w', 9000]]);
    expect(lexicalPlan(tokens, 1_000_000, () => 10_000, 20, 20_000).exact).toBe(true);
    expect(lexicalPlan(tokens, 1_000_000, () => 100_000, 20, 20_000)).toEqual({ exact: false, join: 'OR', essential: ['y', 'z', 'w'], rest: ['x'] });
  });

  it('ranks the rows holding all of the rarest few when not even the rarest token fits', () => {
    expect(lexicalPlan(rows([['r', 300_000], ['p', 100_000], ['q', 200_000]]), 1_000_000, () => 1_000_000, 20, 20_000)).toEqual({
      exact: false,
      join: 'AND',
      essential: ['p', 'q'],
      rest: ['r'],
    });
    expect(lexicalPlan(rows([['p', 400_000], ['q', 450_000], ['r', 420_000]]), 1_000_000, () => 1_000_000, 20, 20_000)).toEqual({
      exact: false,
      join: 'AND',
      essential: ['p', 'q', 'r'],
      rest: [],
    });
  });

  it('stays exact with one common token, and never stands a token found nowhere for the rarest', () => {
    expect(lexicalPlan(rows([['t', 300_000]]), 1_000_000, () => 1_000_000, 20, 20_000)).toEqual({ exact: true, tokens: ['t'] });
    // No informative token: all are kept (lexical-tokens.ts), the one found nowhere included.
    expect(lexicalPlan(rows([['nowhere', 0], ['b', 600_000]]), 1_000_000, () => 1_000_000, 20, 20_000)).toEqual({ exact: true, tokens: ['nowhere', 'b'] });
  });
});

describe('lexicalSeqs on a palace above the exact-scan bound', () => {
  const DRAWERS = 6000;
  const TWINS = 150;
  const K = 20;
  const VOCABULARY = Array.from({ length: 300 }, (_, i) => `w${i}`);
  let dir: string;
  let index: SqliteDrawerIndex;
  let db: Database.Database;
  const rnd = seededRandom(27);
  // Zipf-like word choice: a few words in most rows, most words in few.
  const word = (): string => VOCABULARY[Math.min(VOCABULARY.length - 1, Math.floor(1 / (rnd() + 1 / VOCABULARY.length)) - 1)]!;
  const text = (): string => Array.from({ length: 10 + Math.floor(rnd() * 50) }, word).join(' ');
  const write = (ids: number[]) =>
    index.upsert(
      ids.map((i) =>
        drawer(`d${String(i).padStart(5, '0')}`, text(), randomUnitVector(rnd, 8), { room: i % 3 === 0 ? 'third' : 'rest', source_file: `src/${i % 20}.ts` })
      ),
    );
  const queries = Array.from({ length: 25 }, () => [...new Set(Array.from({ length: 2 + Math.floor(rnd() * 4) }, word))]);

  beforeAll(async () => {
    dir = mkdtempSync(join(os.tmpdir(), 'fts-lexical-'));
    index = SqliteDrawerIndex.open(dir, { dimension: 8 });
    for (let start = 0; start < DRAWERS; start += 500) await write(Array.from({ length: 500 }, (_, i) => start + i));
    // 150 copies of one text, written in an order unlike their ids' order: 150 rows tied on every score.
    await index.upsert(
      Array.from({ length: TWINS }, (_, i) => drawer(`twin${String((i * 37) % TWINS).padStart(3, '0')}`, 'twin w1 w2', randomUnitVector(rnd, 8))),
    );
    db = new Database(join(dir, DRAWER_DB_FILE), { readonly: true });
    db.exec(`CREATE VIRTUAL TABLE temp.${FTS_VOCABULARY} USING fts5vocab(main, drawer_fts, 'row')`);
  });

  afterAll(async () => {
    db.close();
    await index.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const matchOf = (tokens: readonly string[], join: string) => tokens.map((t) => `"${t}"`).join(` ${join} `);
  /** The exact FTS5 ranking of every row holding a kept token, optionally only of rows matching `within`. */
  const reference = (plan: LexicalPlan, filter: DrawerFilter | undefined): number[] => {
    const cond = filterCondition(filter);
    const all = plan.exact ? plan.tokens : [...plan.essential, ...plan.rest];
    const ranked = db
      .prepare(
        `SELECT d.seq FROM drawer_fts JOIN drawers d ON d.seq = drawer_fts.rowid WHERE drawer_fts MATCH ? AND ${cond.sql} ORDER BY bm25(drawer_fts), d.id`,
      )
      .pluck()
      .all(matchOf(all, 'OR'), ...cond.params) as number[];
    if (plan.exact) return ranked.slice(0, K);
    const within = new Set(db.prepare('SELECT rowid FROM drawer_fts WHERE drawer_fts MATCH ?').pluck().all(matchOf(plan.essential, plan.join)));
    return ranked.filter((seq) => within.has(seq)).slice(0, K);
  };
  const planOf = (tokens: string[], filter: DrawerFilter | undefined, budget: number): LexicalPlan => {
    const frequency = db.prepare(`SELECT doc FROM temp.${FTS_VOCABULARY} WHERE term = ?`).pluck();
    const total = db.prepare('SELECT count(*) FROM drawers').pluck().get() as number;
    const cond = filterCondition(filter);
    const scope = db.prepare(`SELECT count(*) FROM drawers d WHERE ${cond.sql}`).pluck().get(...cond.params) as number;
    return lexicalPlan(tokens.map((token) => ({ token, rows: (frequency.get(token) as number | undefined) ?? 0 })), total, () => scope, K, budget);
  };

  const checkAll = () => {
    const seen = { exact: 0, any: 0, all: 0 };
    for (const filter of [undefined, { room: 'rest' }]) {
      for (const tokens of queries) {
        expect(lexicalSeqs(db, new FtsStatistics(db), tokens, K, filter, Infinity)).toEqual(reference(planOf(tokens, filter, Infinity), filter));
        for (const budget of [50, 500, 3000]) {
          const plan = planOf(tokens, filter, budget);
          seen[plan.exact ? 'exact' : plan.join === 'OR' ? 'any' : 'all']++;
          expect(lexicalSeqs(db, new FtsStatistics(db), tokens, K, filter, budget)).toEqual(reference(plan, filter));
        }
      }
    }
    // The budgets above bound the fetch both ways, and leave some queries exact.
    expect(Math.min(seen.exact, seen.any, seen.all)).toBeGreaterThan(0);
  };

  it('returns the exact top k of the rows it ranks, and the exact top k without a budget', () => {
    checkAll();
  });

  it('breaks ties at the k-th row by id, however many rows share its score', () => {
    const ids = (filter: DrawerFilter | undefined) =>
      lexicalSeqs(db, new FtsStatistics(db), ['twin'], K, filter, Infinity).map((seq) => db.prepare('SELECT id FROM drawers WHERE seq = ?').pluck().get(seq));
    const expected = Array.from({ length: K }, (_, i) => `twin${String(i).padStart(3, '0')}`);
    expect(ids(undefined)).toEqual(expected);
    expect(ids({ room: 'room_a' })).toEqual(expected);
  });

  it('still does after deletes, updates and a source written anew', async () => {
    await index.delete(Array.from({ length: 600 }, (_, i) => `d${String(i * 7).padStart(5, '0')}`));
    await write(Array.from({ length: 400 }, (_, i) => i * 11 + 1));
    expect(await index.deleteWhere({ sourceFile: 'src/3.ts' })).toBeGreaterThan(200);
    await write(Array.from({ length: 300 }, (_, i) => i * 20 + 3));
    expect(await index.count()).toBeGreaterThan(5000);
    checkAll();
  });
});

describe('FtsStatistics', () => {
  it('follows writes made through its own connection and through another one', async () => {
    const dir = mkdtempSync(join(os.tmpdir(), 'fts-statistics-'));
    const index = SqliteDrawerIndex.open(dir, { dimension: 8 });
    const reader = new Database(join(dir, DRAWER_DB_FILE), { readonly: true });
    try {
      reader.exec(`CREATE VIRTUAL TABLE temp.${FTS_VOCABULARY} USING fts5vocab(main, drawer_fts, 'row')`);
      const statistics = new FtsStatistics(reader);
      const rnd = seededRandom(5);
      const v = randomUnitVector(rnd, 8);
      // The adapter keeps its own counts: an empty palace's count must not outlive the first write.
      expect(await index.knn(v, 3)).toEqual([]);
      expect([statistics.rows(), statistics.documentFrequency('kept')]).toEqual([0, 0]);
      await index.upsert([drawer('a', 'kept words', v), drawer('b', 'kept', randomUnitVector(rnd, 8))]);
      expect((await index.knn(v, 3)).map((h) => h.drawer.id)).toEqual(['a', 'b']);
      expect([statistics.rows(), statistics.documentFrequency('kept'), statistics.documentFrequency('words')]).toEqual([2, 2, 1]);
      await index.delete(['a']);
      expect([statistics.rows(), statistics.documentFrequency('kept'), statistics.documentFrequency('words')]).toEqual([1, 1, 0]);
      expect((await index.knn(v, 3)).map((h) => h.drawer.id)).toEqual(['b']);
    } finally {
      reader.close();
      await index.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
