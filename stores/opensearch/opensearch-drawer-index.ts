/**
 * The cluster profile's drawer store on OpenSearch 3.x: the drawers and their searches here;
 * file states (file-states.ts), the model record (model-record.ts) and bulk rows (drawer-bulk.ts)
 * over the indices of drawer-indices.ts, on the k-NN plugin (Lucene HNSW).
 * Observable behaviour is the embedded adapter's (the contract suite checks it):
 *
 * - Vector search pushes the filter into the `knn` query (efficient filtering), sent in one
 *   `_msearch` with the count of the rows in scope; exact for a scope of up to the embedded
 *   adapter's exact-scan bound, distances exact, rows re-sorted by (exact distance, id)
 *   (knn-leg.ts). No vector is read back: the engine computes each returned row's exact distance
 *   (exact-distance.ts).
 * - Lexical candidates: rows matching any token (BM25 term queries on the token field, filters
 *   pushed down), chosen and ordered like the embedded FTS5 `bm25()` (lexical-rank.ts) from
 *   statistics read without a pass over every row (lexical-statistics.ts) and each window row's
 *   own token stream (lexical-window.ts); exact whenever the matches fit the re-ranked window.
 * - A union search's pool (both legs, the lexical rows' distances, the scope's size) is one
 *   `_msearch` and one fetch (candidate-pool.ts).
 * - Writes are bulk requests keyed by the drawer id with `require_alias`, and refresh before they
 *   return (`refresh` option), so the caller that wrote reads its writes.
 * - Bulk deletes are `_delete_by_query` with the filter; listings, taxonomy and sources are
 *   sorted searches and composite aggregations, exact at any size.
 *
 * OpenSearch has no multi-document transactions: `upsert` validates the whole batch before
 * sending anything, and `replaceFile` writes new rows first, then deletes the file's stale rows,
 * then records the file state, so an interrupted call leaves a superset that a retry converges.
 */
import type { Drawer, DrawerMeta, DrawerWrite } from '../../core/drawer.js';
import { invalidArgument } from '../../core/errors.js';
import { decodeCursor, encodeCursor, pageWithCursor } from '../shared/drawers/cursor.js';
import type { CandidatePool, DrawerFilter, DrawerIndex, DrawerMetadataRow, DrawerPage, PoolRequest, SourceRow, TaxonomyRow,
  VectorHit } from '../ports/drawers/drawer-index.js';
import { OPENSEARCH_STORE } from './connection.js';
import type { OpenSearchConnection } from './connection.js';
import { DRAWER_SOURCE, documentId, fromSource, vectorFromSource } from './drawer-documents.js';
import { openSearchCandidatePool } from './candidate-pool.js';
import { OpenSearchDrawerBulk } from './drawer-bulk.js';
import { OpenSearchDrawerIndices, PAGE_MAX, type DrawerSource, type OpenSearchDrawerIndexOptions, type SearchBody } from './drawer-indices.js';
import { filterClauses, filterQuery } from './drawer-filter-query.js';
import { filterIsEmpty } from '../shared/drawers/filter-rules.js';
import type { FilterClause } from './drawer-filter-query.js';
import { OpenSearchFileStates } from './file-states.js';
import { LexicalStatistics } from './lexical-statistics.js';
import { distinctTokens, informativeTerms, rankWindow, windowSearch } from './lexical-window.js';
import { ENGINE_MAX, K_MAX, knnLeg } from './knn-leg.js';
import { OpenSearchModelRecord } from './model-record.js';
import { ComposedDrawerStore } from '../shared/drawers/composed-drawer-store.js';
import { asciiLower } from '../shared/drawers/lexical-tokens.js';
import { checkDrawerBatch, checkInt, checkStrings } from '../shared/drawers/port-args.js';

const COMPOSITE_PAGE = 1000;
/** Groups per request while `list` walks the logical drawers. */
const GROUP_WALK = 10_000;

function withFilter(query: FilterClause, clauses: FilterClause[]): FilterClause {
  return clauses.length === 0 ? query : { bool: { must: [query], filter: clauses } };
}

export class OpenSearchDrawerIndex extends ComposedDrawerStore implements DrawerIndex {
  readonly storeName = OPENSEARCH_STORE;

  private readonly statistics: LexicalStatistics;

  private constructor(private readonly base: OpenSearchDrawerIndices) {
    super(new OpenSearchFileStates(base), new OpenSearchModelRecord(base), new OpenSearchDrawerBulk(base));
    this.statistics = new LexicalStatistics(base);
  }

  /** Opens the palace's indices, creating them (templates, `-v1` indices, aliases) if needed. */
  static async open(options: OpenSearchDrawerIndexOptions): Promise<OpenSearchDrawerIndex> {
    return new OpenSearchDrawerIndex(await OpenSearchDrawerIndices.open(options));
  }

  get dimension(): number {
    return this.base.dimension;
  }

  /** The connection, for index administration (reindexTo, dropPalaceIndices). */
  get connection(): OpenSearchConnection {
    return this.base.conn;
  }

  /** Makes every write so far visible to searches (after loads written with `refresh: false`). */
  refresh(): Promise<void> {
    return this.base.refresh();
  }

  async upsert(drawers: DrawerWrite[]): Promise<void> {
    checkDrawerBatch('drawers', drawers, this.base.dimension);
    if (drawers.length === 0) return;
    await this.base.bulk(this.base.drawers, this.base.indexOps(drawers));
  }

  async delete(ids: string[]): Promise<number> {
    checkStrings('ids', ids);
    if (ids.length === 0) return 0;
    const unique = [...new Set(ids)];
    const items = await this.base.bulk(this.base.drawers, unique.map((id) => ({ action: { delete: { _id: documentId(id) } } })));
    return items.filter((i) => i.result === 'deleted').length;
  }

  async deleteWhere(filter: DrawerFilter): Promise<number> {
    if (filterIsEmpty(filter)) throw invalidArgument('filter', 'non_empty', 'deleteWhere needs at least one filter key; refusing to delete every drawer');
    return this.base.deleteByQuery(this.base.drawers, filterQuery(filter));
  }

  async get(ids: string[]): Promise<Drawer[]> {
    checkStrings('ids', ids);
    if (ids.length === 0) return [];
    const byId = await this.base.fetchSources<DrawerSource>(ids, DRAWER_SOURCE);
    return ids.flatMap((id) => {
      const s = byId.get(id);
      return s ? [fromSource(s)] : [];
    });
  }

  async embeddings(ids: string[]): Promise<Map<string, Float32Array>> {
    checkStrings('ids', ids);
    const out = new Map<string, Float32Array>();
    if (ids.length === 0) return out;
    const byId = await this.base.fetchSources<{ id: string; embedding?: number[] }>(ids, ['id', 'embedding']);
    // A row has no vector between resetEmbeddings and the re-embed page that gives it one.
    for (const [id, s] of byId) if (s.embedding !== undefined) out.set(id, vectorFromSource({ embedding: s.embedding }));
    return out;
  }

  async knn(vector: Float32Array, k: number, filter?: DrawerFilter): Promise<VectorHit[]> {
    const leg = knnLeg(this.base.dimension, vector, k, filterClauses(filter), this.statistics.lastRows, this.base.conn.options.efSearch);
    const [counted, first] = await this.base.msearch<DrawerSource>(this.base.drawers, leg.first());
    return leg.finish(counted as SearchBody<never>, first!, (body) => this.base.search<DrawerSource>(this.base.drawers, body));
  }

  async lexical(tokens: string[], k: number, filter?: DrawerFilter): Promise<Drawer[]> {
    checkStrings('tokens', tokens);
    checkInt('k', k, 1, K_MAX);
    const unique = distinctTokens(tokens);
    if (unique.length === 0) return [];
    const chosen = informativeTerms(unique, await this.statistics.read(unique.map(asciiLower)));
    // The window's rows come with their token streams, so each query token's exact frequency
    // and the row's length are counted here, and with their content, so nothing is fetched again.
    const res = await this.base.search<DrawerSource & { lexical: string }>(this.base.drawers,
      windowSearch(chosen.terms, filterClauses(filter), k, DRAWER_SOURCE));
    const rows = new Map(res.hits.hits.map((h) => [h._source!.id, h._source!]));
    return rankWindow(res.hits.hits, chosen, k).map((id) => fromSource(rows.get(id)!));
  }

  candidatePool(request: PoolRequest): Promise<CandidatePool> {
    return openSearchCandidatePool(this.base, this.statistics, request);
  }

  private async countClauses(clauses: FilterClause[]): Promise<number> {
    const res = await this.base.call<{ count: number }>((c) =>
      c.count({ index: this.base.drawers, body: { query: clauses.length === 0 ? { match_all: {} } : { bool: { filter: clauses } } } })
    );
    return res.count;
  }

  async count(filter?: DrawerFilter): Promise<number> {
    return this.countClauses(filterClauses(filter));
  }

  /**
   * Logical drawers (the port's grouping): one walk over the matching groups in logical-id order
   * (a composite aggregation, 10 000 groups per request) counts them exactly and picks the page;
   * then every row of the page's groups, matched by the filter or not, sorted like the embedded
   * adapter: (logical id, chunk_index with missing first, id).
   */
  async list(filter: DrawerFilter, offset: number, limit: number): Promise<DrawerPage> {
    checkInt('offset', offset, 0, Number.MAX_SAFE_INTEGER);
    checkInt('limit', limit, 0, PAGE_MAX);
    const clauses = filterClauses(filter);
    let total = 0;
    const groups: string[] = [];
    let after: Record<string, string> | undefined;
    for (;;) {
      const buckets = await this.composite(['logical_id'], clauses, GROUP_WALK, after);
      for (const b of buckets) {
        if (total >= offset && total < offset + limit) groups.push(b.key.logical_id!);
        total++;
      }
      if (buckets.length < GROUP_WALK) break;
      after = buckets[buckets.length - 1]!.key;
    }
    if (groups.length === 0) return { items: [], total };
    const items: Drawer[] = [];
    const sort = [{ logical_id: 'asc' }, { chunk_index: { order: 'asc', missing: '_first' } }, { id: 'asc' }];
    let resume: unknown[] | undefined;
    for (;;) {
      const res = await this.base.search<DrawerSource>(this.base.drawers, {
        size: ENGINE_MAX,
        _source: DRAWER_SOURCE,
        query: { bool: { filter: [{ terms: { logical_id: groups } }] } },
        sort,
        ...(resume ? { search_after: resume } : {}),
      });
      const hits = res.hits.hits;
      items.push(...hits.map((h) => fromSource(h._source!)));
      if (hits.length < ENGINE_MAX) return { items, total };
      resume = hits[hits.length - 1]!.sort;
    }
  }

  /** Every bucket of a composite aggregation over `fields`, in key order, from `after` on. */
  private async composite(fields: string[], clauses: FilterClause[], size: number,
    after?: Record<string, string>): Promise<{ key: Record<string, string>; doc_count: number }[]> {
    const res = await this.base.search<never>(this.base.drawers, {
      size: 0,
      query: withFilter({ match_all: {} }, clauses),
      aggs: { groups: { composite: { size, sources: fields.map((f) => ({ [f]: { terms: { field: f } } })), ...(after ? { after } : {}) } } },
    });
    return (res.aggregations as { groups: { buckets: { key: Record<string, string>; doc_count: number }[] } }).groups.buckets;
  }

  async taxonomy(filter?: DrawerFilter): Promise<TaxonomyRow[]> {
    const clauses = filterClauses(filter);
    const rows: TaxonomyRow[] = [];
    let after: Record<string, string> | undefined;
    for (;;) {
      const buckets = await this.composite(['wing', 'room'], clauses, COMPOSITE_PAGE, after);
      rows.push(...buckets.map((b) => ({ wing: b.key.wing!, room: b.key.room!, count: b.doc_count })));
      if (buckets.length < COMPOSITE_PAGE) return rows;
      after = buckets[buckets.length - 1]!.key;
    }
  }

  async sources(filter: DrawerFilter, after: string | undefined, limit: number): Promise<{ items: SourceRow[]; next?: string }> {
    checkInt('limit', limit, 1, PAGE_MAX);
    const clauses = filterClauses(filter);
    const resume = after === undefined ? undefined : decodeCursor('after', after);
    const buckets = await this.composite(['wing', 'source_file'], clauses, limit + 1, resume ? { wing: resume[0], source_file: resume[1] } : undefined);
    const rows = buckets.map((b) => ({ wing: b.key.wing!, source_file: b.key.source_file!, drawers: b.doc_count }));
    return pageWithCursor(rows, limit, (r) => encodeCursor(r.wing, r.source_file));
  }

  async scanMetadata(filter: DrawerFilter, after: string | undefined, limit: number): Promise<DrawerMetadataRow[]> {
    checkInt('limit', limit, 1, PAGE_MAX);
    const res = await this.base.search<{ id: string; meta: DrawerMeta }>(this.base.drawers, {
      size: limit,
      _source: ['id', 'meta'],
      query: filterQuery(filter),
      sort: [{ id: 'asc' }],
      ...(after === undefined ? {} : { search_after: [after] }),
    });
    return res.hits.hits.map((h) => ({ id: h._source!.id, meta: h._source!.meta }));
  }

  close(): Promise<void> {
    return this.base.close();
  }
}

/** The factory the composition root (stores/open.ts) calls. */
export async function openOpenSearchDrawerIndex(options: OpenSearchDrawerIndexOptions): Promise<OpenSearchDrawerIndex> {
  return OpenSearchDrawerIndex.open(options);
}
