/** Bulk scan and rewrite of the drawers on OpenSearch (backup, migration, re-embed). */
import type { DrawerWrite } from '../../core/drawer.js';
import type { DrawerBulk } from '../ports/drawers/drawer-bulk.js';
import { checkEmbeddingMap, checkInt } from '../shared/drawers/port-args.js';
import { DRAWER_SOURCE, documentId, fromSource, vectorFromSource } from './drawer-documents.js';
import { PAGE_MAX, type DrawerSource, type OpenSearchDrawerIndices } from './drawer-indices.js';

export class OpenSearchDrawerBulk implements DrawerBulk {
  constructor(private readonly base: OpenSearchDrawerIndices) {}

  async scanRows(after: string | undefined, limit: number): Promise<DrawerWrite[]> {
    checkInt('limit', limit, 1, PAGE_MAX);
    const res = await this.base.search<DrawerSource & { embedding: number[] }>(this.base.drawers, {
      size: limit,
      _source: [...DRAWER_SOURCE, 'embedding'],
      query: { match_all: {} },
      sort: [{ id: 'asc' }],
      ...(after === undefined ? {} : { search_after: [after] }),
    });
    return res.hits.hits.map((h) => ({ ...fromSource(h._source!), embedding: vectorFromSource(h._source!) }));
  }

  async replaceEmbeddings(vectors: Map<string, Float32Array>): Promise<number> {
    // Another process may have changed the palace's vector length (resetEmbeddings) since this one opened it.
    if (vectors.size > 0 && [...vectors.values()][0]!.length !== this.base.dimension) await this.base.followStoredDimension();
    checkEmbeddingMap(vectors, this.base.dimension);
    if (vectors.size === 0) return 0;
    // A partial update of a missing document is refused; only rows that exist are rewritten.
    const stored = await this.base.fetchSources<{ id: string }>([...vectors.keys()], ['id']);
    const ops = [...stored.keys()].map((id) => ({ action: { update: { _id: documentId(id) } }, doc: { doc: { embedding: Array.from(vectors.get(id)!) } } }));
    await this.base.bulk(this.base.drawers, ops);
    return ops.length;
  }

  resetEmbeddings(dimension: number): Promise<void> {
    return this.base.resetDimension(dimension);
  }
}
