/**
 * The embedded drawer index's pure parts: filter → SQL against a real in-memory SQLite table,
 * write checks, resume cursors and the vector blob encoding.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { thrownBy } from '../helpers/errors.js';
import { cosineDistance } from '../../core/vector.js';
import { decodeCursor, encodeCursor } from '../../stores/shared/drawers/cursor.js';
import { filterCondition } from '../../stores/embedded/drawers/filter-sql.js';
import { filterIsEmpty } from '../../stores/shared/drawers/filter-rules.js';
import { decodeVector, encodeVector } from '../../stores/embedded/drawers/rows.js';
import { checkDrawerBatch } from '../../stores/shared/drawers/port-args.js';
import type { DrawerFilter } from '../../stores/ports/drawers/drawer-index.js';
import { drawer, randomUnitVector, seededRandom } from '../contract/drawer-index.fixtures.js';

describe('filterCondition', () => {
  const db = new Database(':memory:');
  db.exec(`CREATE TABLE drawers (id TEXT, wing TEXT, room TEXT, source_file TEXT, parent_drawer_id TEXT, parent_entry_id TEXT, filed_at TEXT, meta TEXT)`);
  const insert = db.prepare('INSERT INTO drawers VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  insert.run('a', 'w1', 'r1', '/a', 'P', null, '2026-01-01T00:00:00.000000Z', JSON.stringify({ n: 1, s: '1', flag: true, agent: 'x' }));
  insert.run('b', 'w1', 'r2', '/b', null, 'P', '2026-01-02T00:00:00.000000Z', JSON.stringify({ n: 2, s: '2', flag: false, agent: 'y' }));
  insert.run('c', 'w2', 'r1', '/a', null, null, '2026-01-03T00:00:00.000000Z', JSON.stringify({ n: 1.5, agent: 'x' }));
  const ids = (filter: DrawerFilter | undefined): string[] => {
    const c = filterCondition(filter);
    return (db.prepare(`SELECT id FROM drawers d WHERE ${c.sql} ORDER BY id`).pluck().all(...c.params) as string[]);
  };

  it('applies each key and combines them with AND', () => {
    expect(ids(undefined)).toEqual(['a', 'b', 'c']);
    expect(ids({ wing: 'w1' })).toEqual(['a', 'b']);
    expect(ids({ wing: 'w1', room: 'r1' })).toEqual(['a']);
    expect(ids({ sourceFile: '/a' })).toEqual(['a', 'c']);
    expect(ids({ parentId: 'P' })).toEqual(['a', 'b']);
    expect(ids({ since: '2026-01-02T00:00:00.000000Z' })).toEqual(['b', 'c']);
    expect(ids({ before: '2026-01-02T00:00:00.000000Z' })).toEqual(['a']);
  });

  it('matches metadata values type-exactly', () => {
    expect(ids({ meta: { n: 1 } })).toEqual(['a']);
    expect(ids({ meta: { n: 1.5 } })).toEqual(['c']);
    expect(ids({ meta: { s: 1 } })).toEqual([]);
    expect(ids({ meta: { s: '1' } })).toEqual(['a']);
    expect(ids({ meta: { flag: true } })).toEqual(['a']);
    expect(ids({ meta: { flag: false } })).toEqual(['b']);
    expect(ids({ meta: { n: 1 as number, agent: 'x' } })).toEqual(['a']);
  });

  it('refuses unsafe metadata keys and values, naming the field', () => {
    expect(thrownBy(() => filterCondition({ meta: { "a'b": 'x' } })).field).toBe('filter.meta');
    expect(thrownBy(() => filterCondition({ meta: { n: Number.NaN } })).field).toBe('filter.meta.n');
    expect(thrownBy(() => filterCondition({ wing: 3 as unknown as string })).field).toBe('filter.wing');
  });

  it('knows when a filter restricts nothing', () => {
    expect(filterIsEmpty(undefined)).toBe(true);
    expect(filterIsEmpty({ meta: {} })).toBe(true);
    expect(filterIsEmpty({ wing: undefined })).toBe(true);
    expect(filterIsEmpty({ sourceFile: '' })).toBe(false);
  });
});

describe('checkDrawerBatch', () => {
  const rnd = seededRandom(3);
  const ok = () => drawer('x', 'text', randomUnitVector(rnd, 8));

  it('accepts a valid batch', () => {
    expect(() => checkDrawerBatch('drawers', [ok(), { ...ok(), id: 'y' }], 8)).not.toThrow();
  });

  it('names the first bad field and rule', () => {
    const cases: [unknown, string, string][] = [
      [{ ...ok(), embedding: randomUnitVector(rnd, 7) }, 'drawers[0].embedding', 'dimension'],
      [{ ...ok(), embedding: new Float32Array(8).fill(1) }, 'drawers[0].embedding', 'unit_norm'],
      [{ ...ok(), embedding: [1, 0] }, 'drawers[0].embedding', 'type'],
      [{ ...ok(), id: '' }, 'drawers[0].id', 'non_empty'],
      [{ ...ok(), content: 'a\0b' }, 'drawers[0].content', 'no_nul'],
      [{ ...ok(), meta: { ...ok().meta, room: '' } }, 'drawers[0].meta.room', 'non_empty'],
      [{ ...ok(), meta: { ...ok().meta, tags: ['a'] } }, 'drawers[0].meta.tags', 'type'],
    ];
    for (const [bad, field, rule] of cases) {
      const e = thrownBy(() => checkDrawerBatch('drawers', [bad as ReturnType<typeof ok>], 8));
      expect([e.code, e.field, e.rule]).toEqual(['invalid_argument', field, rule]);
    }
    expect(thrownBy(() => checkDrawerBatch('drawers', [ok(), ok()], 8)).field).toBe('drawers[1].id');
  });
});

describe('cursors and vectors', () => {
  it('round-trips a cursor with any characters and refuses a foreign one', () => {
    const c = encodeCursor('wing ü', '/päth/with "quotes",\n and 😀');
    expect(decodeCursor('after', c)).toEqual(['wing ü', '/päth/with "quotes",\n and 😀']);
    expect(thrownBy(() => decodeCursor('after', '/some/path')).rule).toBe('cursor_format');
  });

  it('stores float32 vectors bit-exactly, whatever the blob alignment', () => {
    const v = randomUnitVector(seededRandom(9), 384);
    const blob = encodeVector(v);
    const shifted = Buffer.alloc(blob.length + 1);
    blob.copy(shifted, 1);
    expect(Array.from(decodeVector(shifted.subarray(1)))).toEqual(Array.from(v));
    expect(cosineDistance(v, v)).toBeCloseTo(0, 6);
    expect(cosineDistance(v, v.map((x) => -x))).toBeCloseTo(2, 6);
  });
});
