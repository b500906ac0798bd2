/**
 * The DrawerIndex contract run against the embedded SQLite adapter, plus what only this adapter
 * has: its FTS5 tokenizer and the derived ANN file (rebuilt when missing, stale or corrupt).
 */
import { mkdtempSync, rmSync, truncateSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { lexicalText } from '../../core/lexical.js';
import type { SqliteDrawerIndex } from '../../stores/embedded/drawers/sqlite-drawer-index.js';
import { DRAWER_ANN_FILE, DRAWER_DB_FILE } from '../../stores/embedded/drawers/drawer-db.js';
import { openSqliteDrawerIndex } from '../../stores/embedded/drawers/sqlite-drawer-index.js';
import { DRAWER_SCHEMA_VERSION } from '../../stores/embedded/drawers/schema.js';
import { describeDrawerIndexContract } from './drawer-index.contract.js';
import { bruteForce, drawer, nearVector, randomUnitVector, seededRandom } from './drawer-index.fixtures.js';

function freshPalace(): { dir: string; handles: SqliteDrawerIndex[]; open: () => Promise<SqliteDrawerIndex>; cleanup: () => Promise<void> } {
  const dir = mkdtempSync(join(tmpdir(), 'drawer-index-'));
  const handles: SqliteDrawerIndex[] = [];
  return {
    dir,
    handles,
    open: async () => {
      const index = await openSqliteDrawerIndex(dir);
      handles.push(index);
      return index;
    },
    cleanup: async () => {
      for (const h of handles) await h.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describeDrawerIndexContract('embedded SQLite', async () => {
  const palace = freshPalace();
  return { index: await palace.open(), reopen: palace.open, cleanup: palace.cleanup };
});

describe('SqliteDrawerIndex specifics', () => {
  let palace: ReturnType<typeof freshPalace>;
  afterEach(async () => {
    await palace.cleanup();
  });

  it('indexes each product token whole: FTS5 splits only on whitespace', async () => {
    palace = freshPalace();
    const index = await palace.open();
    const content = 'os.path.join in Zürich; naïve_snake-case and हिन्दी text';
    await index.upsert([drawer('tok', content, randomUnitVector(seededRandom(1), index.dimension))]);
    await index.close();
    const db = new Database(join(palace.dir, DRAWER_DB_FILE), { readonly: true });
    try {
      db.exec("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, drawer_fts, 'row')");
      const terms = (db.prepare('SELECT term FROM temp.vocab').pluck().all() as string[]).sort();
      expect(terms).toEqual([...new Set(lexicalText(content).split(' '))].sort());
      expect(terms).toContain('os.path.join');
      expect(terms).toContain('zürich');
      expect(terms).toContain('naïve_snake-case');
      expect(terms).toContain('हिन्दी');
    } finally {
      db.close();
    }
  });

  it('creates the schema idempotently and refuses a different dimension', async () => {
    palace = freshPalace();
    const first = await palace.open();
    await first.close();
    const second = await palace.open();
    expect(second.dimension).toBe(384);
    await second.close();
    const db = new Database(join(palace.dir, DRAWER_DB_FILE), { readonly: true });
    expect(db.pragma('user_version', { simple: true })).toBe(DRAWER_SCHEMA_VERSION);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
    await expect(openSqliteDrawerIndex(palace.dir, { dimension: 16 })).rejects.toMatchObject({ code: 'invalid_argument', field: 'dimension' });
  });

  describe('the ANN file is derived and repaired on open', () => {
    const ROWS = 5000;
    async function seeded(): Promise<{ rows: ReturnType<typeof drawer>[]; queries: Float32Array[] }> {
      palace = freshPalace();
      const index = await palace.open();
      const rnd = seededRandom(42);
      const centers = Array.from({ length: 40 }, () => randomUnitVector(rnd, index.dimension));
      const rows = Array.from({ length: ROWS }, (_, i) => drawer(`a${i}`, `ann row ${i}`, nearVector(rnd, centers[i % 40]!)));
      for (let i = 0; i < ROWS; i += 500) await index.upsert(rows.slice(i, i + 500));
      await index.close();
      return { rows, queries: Array.from({ length: 5 }, (_, q) => nearVector(rnd, centers[q * 3]!)) };
    }
    async function expectGoodAnswers(index: SqliteDrawerIndex, rows: ReturnType<typeof drawer>[], queries: Float32Array[]): Promise<void> {
      expect(index.annStatus.size).toBe(await index.count());
      for (const q of queries) {
        const hits = await index.knn(q, 10);
        expect(hits[0]!.drawer.id).toBe(bruteForce(rows, q, 1)[0]!.id);
      }
    }

    it('loads a clean file without rebuilding', async () => {
      const { rows, queries } = await seeded();
      const index = await palace.open();
      expect(index.annStatus.outcome).toBe('loaded');
      await expectGoodAnswers(index, rows, queries);
    });

    it('rebuilds a deleted file', async () => {
      const { rows, queries } = await seeded();
      rmSync(join(palace.dir, DRAWER_ANN_FILE));
      const index = await palace.open();
      expect(index.annStatus).toMatchObject({ outcome: 'rebuilt', reason: 'missing' });
      await expectGoodAnswers(index, rows, queries);
      expect(existsSync(join(palace.dir, DRAWER_ANN_FILE))).toBe(true);
    });

    it('rebuilds a corrupted or truncated file', async () => {
      const { rows, queries } = await seeded();
      const path = join(palace.dir, DRAWER_ANN_FILE);
      const bytes = readFileSync(path);
      bytes.fill(0xff, 1000, 5000);
      writeFileSync(path, bytes);
      let index = await palace.open();
      expect(index.annStatus).toMatchObject({ outcome: 'rebuilt', reason: 'checksum mismatch' });
      await expectGoodAnswers(index, rows, queries);
      await index.close();
      truncateSync(path, 100);
      index = await palace.open();
      expect(index.annStatus.outcome).toBe('rebuilt');
      await expectGoodAnswers(index, rows, queries);
    });

    it('repairs a stale file left by writes that were never persisted', async () => {
      const { rows, queries } = await seeded();
      const path = join(palace.dir, DRAWER_ANN_FILE);
      const persisted = readFileSync(path);
      const index = await palace.open();
      const rnd = seededRandom(5);
      const extra = Array.from({ length: 30 }, (_, i) => drawer(`late${i}`, `late ${i}`, randomUnitVector(rnd, index.dimension)));
      await index.upsert(extra);
      await index.delete(['a0', 'a1', 'a2']);
      await index.close();
      // Put back the file as it was before those writes: as if the process died before persisting.
      writeFileSync(path, persisted);
      const db = new Database(join(palace.dir, DRAWER_DB_FILE));
      const sha = (await import('node:crypto')).createHash('sha256').update(persisted).digest('hex');
      db.prepare("UPDATE palace_meta SET value = ? WHERE key = 'ann_file_sha256'").run(sha);
      db.prepare("UPDATE palace_meta SET value = CAST(value AS INTEGER) - 2 WHERE key = 'ann_file_generation'").run();
      db.close();
      const reopened = await palace.open();
      expect(reopened.annStatus.outcome).toBe('repaired');
      const live = rows.slice(3).concat(extra);
      await expectGoodAnswers(reopened, live, queries);
      const nearest = await reopened.knn(extra[4]!.embedding, 1);
      expect(nearest[0]!.drawer.id).toBe('late4');
      const gone = await reopened.knn(rows[1]!.embedding, 20);
      expect(gone.map((h) => h.drawer.id)).not.toContain('a1');
    });
  });

  it('puts a large write into the graph in slices between macrotasks, and a search sees all of it', async () => {
    palace = freshPalace();
    const index = await palace.open();
    const rnd = seededRandom(31);
    const rows = Array.from({ length: 2000 }, (_, i) => drawer(`s${i}`, `slice ${i}`, randomUnitVector(rnd, index.dimension)));
    await index.upsert(rows);
    // The write is committed; the graph takes it over while the event loop keeps turning.
    expect(index.annStatus.size).toBe(0);
    let turns = 0;
    while (index.annStatus.size < rows.length) {
      await new Promise((resolve) => setImmediate(resolve));
      turns += 1;
      expect(turns).toBeLessThan(100);
    }
    expect(turns).toBeGreaterThanOrEqual(Math.ceil(rows.length / 256));
    await index.upsert(rows.slice(0, 10).map((r) => ({ ...r, content: `${r.content} again` })));
    expect((await index.knn(rows[1999]!.embedding, 1))[0]!.drawer.id).toBe('s1999');
    expect(index.annStatus.size).toBe(2000);
  });

  it('sees writes another connection made to the same palace', async () => {
    palace = freshPalace();
    const a = await palace.open();
    const b = await palace.open();
    const rnd = seededRandom(77);
    const centers = Array.from({ length: 30 }, () => randomUnitVector(rnd, a.dimension));
    const rows = Array.from({ length: 4500 }, (_, i) => drawer(`x${i}`, `x ${i}`, nearVector(rnd, centers[i % 30]!)));
    for (let i = 0; i < rows.length; i += 500) await a.upsert(rows.slice(i, i + 500));
    expect((await b.knn(rows[4400]!.embedding, 1))[0]!.drawer.id).toBe('x4400');
    await a.delete(['x4400']);
    expect((await b.knn(rows[4400]!.embedding, 1))[0]!.drawer.id).not.toBe('x4400');
    expect(b.annStatus.size).toBe(4499);
  });
});
