/** Bulk scan and rewrite of the embedded drawer store's rows (backup, migration, re-embed). */
import type { DrawerWrite } from '../../../core/drawer.js';
import type { DrawerBulk } from '../../ports/drawers/drawer-bulk.js';
import { checkEmbeddingMap, checkInt } from '../../shared/drawers/port-args.js';
import { PAGE_MAX, type SqliteDrawerDb } from './drawer-db.js';
import { DRAWER_COLUMNS, decodeVector, encodeVector, rowToDrawer, type DrawerRow } from './rows.js';

export class SqliteDrawerBulk implements DrawerBulk {
  constructor(private readonly base: SqliteDrawerDb) {}

  async scanRows(after: string | undefined, limit: number): Promise<DrawerWrite[]> {
    return this.base.run(() => {
      checkInt('limit', limit, 1, PAGE_MAX);
      const rows = this.base.db
        .prepare(`SELECT ${DRAWER_COLUMNS}, e.vector AS vector FROM drawers d JOIN drawer_embeddings e ON e.seq = d.seq
          WHERE d.id > ? ORDER BY d.id LIMIT ?`)
        .all(after ?? '', limit) as (DrawerRow & { vector: Buffer })[];
      return rows.map(({ vector, ...row }) => ({ ...rowToDrawer(row), embedding: decodeVector(vector) }));
    });
  }

  async replaceEmbeddings(vectors: Map<string, Float32Array>): Promise<number> {
    return this.base.run(() => {
      // Another process may have changed the palace's vector length (resetEmbeddings) since this one opened it.
      this.base.ann.followStoredDimension();
      checkEmbeddingMap(vectors, this.base.dimension);
      if (vectors.size === 0) return 0;
      // An upsert: after resetEmbeddings a row has no vector until it is given one here.
      const update = this.base.db.prepare(`INSERT INTO drawer_embeddings (seq, vector, gen) SELECT seq, ?, ? FROM drawers WHERE id = ?
        ON CONFLICT (seq) DO UPDATE SET vector = excluded.vector, gen = excluded.gen`);
      let changed = 0;
      this.base.transact((generation) => {
        for (const [id, vector] of vectors) changed += update.run(encodeVector(vector), generation, id).changes;
        return [];
      });
      return changed;
    });
  }

  async resetEmbeddings(dimension: number): Promise<void> {
    this.base.run(() => this.base.resetDimension(dimension));
  }
}
