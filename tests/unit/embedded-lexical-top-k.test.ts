/**
 * The embedded lexical leg's bounded search (stores/embedded/drawers/lexical-top-k.ts) returns
 * exactly the rows, in exactly the order, that FTS5's own ranking of every match returns: many
 * queries mixing rare and common words, with and without filters, over a palace with duplicate
 * texts (ties broken by id) and deleted rows (FTS5's totals then still count them).
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../core/seeded-random.js';
import { DRAWER_DB_FILE } from '../../stores/embedded/drawers/drawer-db.js';
import { filterCondition } from '../../stores/embedded/drawers/filter-sql.js';
import { lexicalTopK } from '../../stores/embedded/drawers/lexical-top-k.js';
import { openSqliteDrawerIndex } from '../../stores/embedded/drawers/sqlite-drawer-index.js';
import type { SqliteDrawerIndex } from '../../stores/embedded/drawers/sqlite-drawer-index.js';
import type { DrawerFilter } from '../../stores/ports/drawers/drawer-index.js';
import { drawer, randomUnitVector } from '../contract/drawer-index.fixtures.js';

const WORDS = Array.from({ length: 400 }, (_, i) => (i % 7 === 0 ? `ident_${i}.part` : `w${i}`));

/** Word i drawn with weight 1/(i+1): a few words in most rows, most words in few. */
function zipfWord(rnd: () => number): string {
  const total = WORDS.reduce((s, _, i) => s + 1 / (i + 1), 0);
  let x = rnd() * total;
  for (const [i, w] of WORDS.entries()) {
    x -= 1 / (i + 1);
    if (x <= 0) return w;
  }
  return WORDS[WORDS.length - 1]!;
}

let dir: string;
let index: SqliteDrawerIndex;
let db: Database.Database;

beforeAll(async () => {
  dir = mkdtempSync(join(os.tmpdir(), 'lexical-top-k-'));
  index = await openSqliteDrawerIndex(dir, { dimension: 8 });
  const rnd = seededRandom(3);
  const rows = Array.from({ length: 3000 }, (_, i) => {
    // Every tenth row repeats an earlier text: equal scores, ordered by id.
    const text = i % 10 === 9
      ? `${WORDS[(i * 13) % 50]} shared text of row ${i - (i % 50)}`
      : Array.from({ length: 5 + Math.floor(rnd() * 60) }, () => zipfWord(rnd)).join(' ');
    return drawer(`d${String(i).padStart(5, '0')}`, text, randomUnitVector(rnd, 8), { wing: i % 3 === 0 ? 'w_a' : 'w_b', room: `r${i % 11}` });
  });
  for (let i = 0; i < rows.length; i += 500) await index.upsert(rows.slice(i, i + 500));
  await index.delete(rows.filter((_, i) => i % 17 === 0).map((r) => r.id));
  db = new Database(join(dir, DRAWER_DB_FILE), { readonly: true });
  db.exec(`CREATE VIRTUAL TABLE temp.vocabulary USING fts5vocab(main, drawer_fts, 'row')`);
});

afterAll(async () => {
  db.close();
  await index.close();
  rmSync(dir, { recursive: true, force: true });
});

/** FTS5 ranking every match: the query the bounded search replaces. */
function fullRanking(terms: string[], k: number, filter: DrawerFilter | undefined): number[] {
  const cond = filterCondition(filter);
  return db
    .prepare(
      `SELECT d.seq FROM drawer_fts JOIN drawers d ON d.seq = drawer_fts.rowid WHERE drawer_fts MATCH ? AND ${cond.sql}
       ORDER BY bm25(drawer_fts), d.id LIMIT ?`,
    )
    .pluck()
    .all(terms.map((t) => `"${t}"`).join(' OR '), ...cond.params, k) as number[];
}

const documentFrequency = (terms: string[]) =>
  terms.map((t) => (db.prepare('SELECT doc FROM temp.vocabulary WHERE term = ?').pluck().get(t) as number | undefined) ?? 0);

describe('lexicalTopK', () => {
  const rnd = seededRandom(9);
  const queries = Array.from({ length: 60 }, (_, q) => {
    // Mixes of the most common words with rarer ones, in varying order.
    const length = 1 + (q % 5);
    return [...new Set(Array.from({ length }, (_, j) => WORDS[j % 2 === 0 ? Math.floor(rnd() * 12) : Math.floor(rnd() * WORDS.length)]!))];
  });
  const filters: (DrawerFilter | undefined)[] = [undefined, { wing: 'w_b' }, { room: 'r3' }];

  it('returns the rows and order of FTS5 ranking every match, for every query, k and filter', () => {
    let compared = 0;
    for (const [q, terms] of queries.entries()) {
      const filter = filters[q % filters.length];
      for (const k of [1, 20, 200]) {
        const bounded = lexicalTopK(db, terms, documentFrequency(terms), k, filterCondition(filter));
        expect(bounded, `${terms.join(' ')} k=${k}`).toBeDefined();
        expect(bounded, `${terms.join(' ')} k=${k}`).toEqual(fullRanking(terms, k, filter));
        compared++;
      }
    }
    expect(compared).toBe(180);
  });

  it('answers through the adapter with the same drawers as the full ranking', async () => {
    for (const terms of queries.slice(0, 30)) {
      const informative = terms.filter((_, i) => {
        const n = documentFrequency(terms)[i]!;
        return n > 0 && 2 * n < (db.prepare('SELECT count(*) FROM drawers').pluck().get() as number);
      });
      const expected = fullRanking(informative.length > 0 ? informative : terms, 20, undefined);
      const ids = db.prepare('SELECT d.id FROM json_each(?) AS j CROSS JOIN drawers d ON d.seq = j.value ORDER BY j.key').pluck().all(JSON.stringify(expected));
      expect((await index.lexical(terms, 20)).map((d) => d.id)).toEqual(ids);
    }
  });
});
