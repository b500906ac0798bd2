import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GRAPH_DB_FILE, openSqliteGraphStore } from '../../stores/embedded/sqlite-graph-store.js';
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
});
