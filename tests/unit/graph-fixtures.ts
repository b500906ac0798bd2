/**
 * A real embedded palace for graph tests: the SQLite GraphStore and the SQLite DrawerIndex in
 * one temp directory, plus a terse way to file drawers with the metadata the graph reads.
 */
import type { DrawerMeta, DrawerWrite } from '../../core/drawer.js';
import type { GraphContext } from '../../palace/graph/room-graph.js';
import { openSqliteDrawerIndex } from '../../stores/embedded/drawers/sqlite-drawer-index.js';
import { openSqliteGraphStore } from '../../stores/embedded/sqlite-graph-store.js';
import { makeTempDir, removeDir } from '../helpers/tmp.js';

export interface DrawerSpec {
  id?: string;
  wing: string;
  room: string;
  content?: string;
  hall?: string;
  date?: string;
  entities?: string;
  extra?: Partial<DrawerMeta>;
}

export interface GraphPalace {
  ctx: GraphContext;
  file(specs: DrawerSpec[]): Promise<void>;
  cleanup(): Promise<void>;
}

const DIMENSION = 4;
let counter = 0;

export async function openGraphPalace(now?: () => Date): Promise<GraphPalace> {
  const dir = makeTempDir('mempalace-graphpal-');
  const drawers = await openSqliteDrawerIndex(dir, { dimension: DIMENSION });
  const graph = await openSqliteGraphStore(dir);
  return {
    ctx: { graph, drawers, ...(now ? { now } : {}) },
    async file(specs) {
      const writes: DrawerWrite[] = specs.map((s) => {
        counter += 1;
        const meta: DrawerMeta = {
          wing: s.wing,
          room: s.room,
          source_file: '',
          chunk_index: 0,
          added_by: 'test',
          filed_at: `2026-01-01T00:00:00.${String(counter).padStart(6, '0')}Z`,
          ...(s.hall === undefined ? {} : { hall: s.hall }),
          ...(s.date === undefined ? {} : { date: s.date }),
          ...(s.entities === undefined ? {} : { entities: s.entities }),
          ...s.extra,
        };
        return { id: s.id ?? `drawer_${counter}`, content: s.content ?? `drawer ${counter}`, meta, embedding: new Float32Array([1, 0, 0, 0]) };
      });
      await drawers.upsert(writes);
    },
    async cleanup() {
      await graph.close();
      await drawers.close();
      removeDir(dir);
    },
  };
}
