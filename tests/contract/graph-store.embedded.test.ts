import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { GRAPH_DB_FILE, openSqliteGraphStore } from '../../stores/embedded/sqlite-graph-store.js';
import { kgFact } from '../helpers/kg.js';
import { makeTempDir, openInTempDir, removeDir } from '../helpers/tmp.js';
import { describeGraphStoreContract } from './graph-store.contract.js';

const tempPalace = () => makeTempDir('mempalace-graph-');

describeGraphStoreContract('embedded (SQLite)', async () => {
  const { store: graph, cleanup } = await openInTempDir('mempalace-graph-', openSqliteGraphStore);
  return { graph, cleanup };
});

describe('SQLite GraphStore specifics', () => {
  it('keeps its data in <palace>/graph.sqlite3 across reopen, with an idempotent schema', async () => {
    const dir = tempPalace();
    try {
      const first = await openSqliteGraphStore(dir);
      await first.tunnelUpsert([{ id: 't', source: { wing: 'a', room: 'r' }, target: { wing: 'b', room: 'r' }, label: 'x', kind: 'explicit',
        source_wing_key: 'a', target_wing_key: 'b', at: '2030-01-01T00:00:00.000000+00:00', by: null }]);
      await first.close();
      expect(fs.existsSync(path.join(dir, GRAPH_DB_FILE))).toBe(true);
      const second = await openSqliteGraphStore(dir);
      expect((await second.tunnelList()).map((t) => t.label)).toEqual(['x']);
      await second.close();
    } finally {
      removeDir(dir);
    }
  });

  it('serialises writers from two connections on the same palace', async () => {
    const dir = tempPalace();
    const a = await openSqliteGraphStore(dir);
    const b = await openSqliteGraphStore(dir);
    try {
      const w = (id: string, at: string) => ({ id, source: { wing: 'a', room: 'r' }, target: { wing: 'b', room: 'r' }, label: id, kind: 'explicit' as const,
        source_wing_key: 'a', target_wing_key: 'b', at, by: null });
      await Promise.all([a.tunnelUpsert([w('same', '2030-01-01T00:00:00.000001+00:00')]), b.tunnelUpsert([w('same', '2030-01-01T00:00:00.000002+00:00')])]);
      expect(await a.tunnelCount()).toBe(1);
      expect(await b.tunnelCount()).toBe(1);
    } finally {
      await a.close();
      await b.close();
      removeDir(dir);
    }
  });

  it('migrates a version 1 palace in place: its facts and tunnels keep working, with no one recorded as their maker', async () => {
    const dir = tempPalace();
    try {
      // A graph file as version 1 left it: the tables without the ownership columns, one fact and one tunnel.
      await (await openSqliteGraphStore(dir)).close();
      const v1 = new Database(path.join(dir, GRAPH_DB_FILE));
      for (const [table, column] of [['kg_triples', 'created_by'], ['kg_triples', 'updated_by'], ['kg_triples', 'updated_at'], ['tunnels', 'created_by'], [
        'tunnels',
        'updated_by',
      ]]) v1.exec(`ALTER TABLE ${table} DROP COLUMN ${column}`);
      v1.exec(`INSERT INTO kg_entities (id, name, created_at) VALUES ('a', 'A', '2030'), ('b', 'B', '2030');
        INSERT INTO kg_triples (id, subject, predicate, object, recorded_at) VALUES ('t_old', 'a', 'p', 'b', '2030-01-01T00:00:00.000000Z');
        INSERT INTO tunnels (id, source_wing, source_room, source_wing_key, target_wing, target_room, target_wing_key, label, kind, created_at,
          strength, stability, last_activated, access_count) VALUES ('tn_old', 'a', 'r', 'a', 'b', 'r', 'b', 'old', 'explicit', '2030', 1, 1, '2030', 0)`);
      v1.pragma('user_version = 1');
      v1.close();

      const g = await openSqliteGraphStore(dir);
      try {
        expect(await g.kgFacts({ entity_id: 'a', direction: 'outgoing' })).toEqual([
          expect.objectContaining({ id: 't_old', created_by: null, updated_by: null, updated_at: null }),
        ]);
        const [old] = await g.tunnelList();
        expect(old).toMatchObject({ id: 'tn_old', label: 'old' });
        expect(old).not.toHaveProperty('created_by');
        await g.kgInvalidate({ subject_id: 'a', predicate: 'p', object_id: 'b', ended: '2031-01-01T00:00:00Z', ended_key: '2031-01-01T00:00:00Z',
          max_from_key: '2031-01-01T00:00:00Z', change: { updated_by: 'bob', updated_at: '2031-01-01T00:00:00.000000Z' } });
        await g.kgAdd(
          kgFact({ id: 't_new', subject: { id: 'a', name: 'A' }, predicate: 'q', object: { id: 'b', name: 'B' }, recorded_at: '2031-01-01T00:00:00.000001Z',
            created_by: 'alice' }),
        );
        expect((await g.kgFacts({ entity_id: 'a', direction: 'outgoing' })).map((f) => [f.id, f.created_by, f.updated_by])).toEqual([['t_old', null, 'bob'], [
          't_new',
          'alice',
          null,
        ]]);
      } finally {
        await g.close();
      }
      const after = new Database(path.join(dir, GRAPH_DB_FILE), { readonly: true });
      expect(after.pragma('user_version', { simple: true })).toBe(2);
      after.close();
    } finally {
      removeDir(dir);
    }
  });
});
