/**
 * The cluster profile's drawer store on OpenSearch 3.x: the drawers and their searches here;
 * file states (file-states.ts), the model record (model-record.ts) and bulk rows (drawer-bulk.ts)
 * over the indices of drawer-indices.ts, on the k-NN plugin (Lucene HNSW).
 * Observable behaviour is the embedded adapter's (the contract suite checks it):
 *
 * - Vector search pushes the filter into the `knn` query (efficient filtering), sent in one
 *   `_msearch` with the count of the rows in scope. When the filter
 *   matches few enough rows (the embedded adapter's exact-scan bound) the engine is asked for all
 *   of them, which makes Lucene score every filtered row exactly; otherwise HNSW gives at least
 *   `EF_SEARCH` candidates. Either way distances are recomputed from the stored vectors and the
 *   candidates re-sorted by (exact distance, id); the fetch widens until no row the engine ranked
 *   lower could beat the k-th by exact distance.
 * - Lexical candidates: rows matching any token (BM25 term queries on the token field, filters
 *   pushed down), chosen and ordered like the embedded FTS5 `bm25()` (lexical-rank.ts) from
 *   statistics read without a pass over every row (lexical-statistics.ts) and each window row's
 *   own token stream; exact whenever the matches fit the re-ranked window. No script runs.
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
import { cosineDistance } from '../../core/vector.js';
import { decodeCursor, encodeCursor, pageWithCursor } from '../shared/drawers/cursor.js';
import type { DrawerFilter, DrawerIndex, DrawerMetadataRow, DrawerPage, SourceRow, TaxonomyRow, VectorHit } from '../ports/drawers/drawer-index.js';
import { OPENSEARCH_STORE } from './connection.js';
import type { OpenSearchConnection } from './connection.js';
import { DRAWER_SOURCE, documentId, fromSource, vectorFromSource } from './drawer-documents.js';
import { OpenSearchDrawerBulk } from './drawer-bulk.js';
import { OpenSearchDrawerIndices, PAGE_MAX, type DrawerSource, type OpenSearchDrawerIndexOptions } from './drawer-indices.js';
import { filterClauses, filterQuery } from './drawer-filter-query.js';
import { filterIsEmpty } from '../shared/drawers/filter-rules.js';
import type { FilterClause } from './drawer-filter-query.js';
import { OpenSearchFileStates } from './file-states.js';
import { lexicalMatch, rankLikeFts5 } from './lexical-rank.js';
import { LexicalStatistics } from './lexical-statistics.js';
import type { LexicalMatch } from './lexical-rank.js';
import { OpenSearchModelRecord } from './model-record.js';
import { ComposedDrawerStore } from '../shared/drawers/composed-drawer-store.js';
import { exactScanBound } from '../shared/drawers/exact-scan.js';
import { asciiLower, informativeTokenPositions } from '../shared/drawers/lexical-tokens.js';
import { checkDrawerBatch, checkInt, checkStrings } from '../shared/drawers/port-args.js';

/** OpenSearch's ceiling for `k`, `size` and `from + size`. */
const ENGINE_MAX = 10_000;
/** HNSW candidates asked for when the search is approximate (the embedded graph's ef). */
const EF_SEARCH = 100;
/** Rows fetched beyond k before the exact re-sort; widened when the bound below needs it. */
const KNN_SLACK = 16;
/** Lucene's float cosine may differ from the exact one by this much on the score scale [0, 1]. */
const ENGINE_SCORE_ERROR = 1e-5;
/**
 * Lexical matches re-ranked exactly per call: Lucene's BM25 (same k1 and b) picks this window,
 * the FTS5 function picks k from it. Every match takes part up to this many; beyond, a row Lucene
 * ranks below the window cannot be chosen (both rank by BM25 with k1 1.2, b 0.75, so the FTS5
 * top k lies far inside it in practice). Reading a window row cost 0.1–0.25 ms on the 2-core
 * test machine, hence not more.
 */
const LEXICAL_WINDOW_MIN = 200;
const LEXICAL_WINDOW_PER_K = 10;
const K_MAX = 10_000;
const COMPOSITE_PAGE = 1000;
/** Groups per request while `list` walks the logical drawers. */
const GROUP_WALK = 10_000;

type KnnSource = DrawerSource & { embedding: number[] };

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
    if (!(vector instanceof Float32Array) || vector.length !== this.base.dimension) {
      throw invalidArgument('vector', 'dimension', `vector must be a Float32Array of ${this.base.dimension} numbers`);
    }
    checkInt('k', k, 1, K_MAX);
    const clauses = filterClauses(filter);
    const filtered = clauses.length > 0 ? { bool: { filter: clauses } } : undefined;
    const knnQuery = (engineK: number, knnFilter: FilterClause | undefined) => ({
      knn: { embedding: { vector: Array.from(vector), k: engineK, ...(knnFilter ? { filter: knnFilter } : {}) } },
    });
    const page = (size: number, query: FilterClause) => ({ size, query, _source: [...DRAWER_SOURCE, 'embedding'] });
    // The scope's size and the approximate search in one round trip; most searches of a large
    // palace need nothing else. A scope small enough to scan is searched again, exactly.
    const approximateK = Math.min(ENGINE_MAX, Math.max(k, EF_SEARCH));
    const firstSize = Math.min(approximateK, k + KNN_SLACK);
    const [counted, approximate] = await this.base.msearch<KnnSource>(this.base.drawers, [
      { size: 0, track_total_hits: true, query: filtered ?? { match_all: {} } },
      page(firstSize, knnQuery(approximateK, filtered)),
    ]);
    const matching = counted!.hits.total?.value ?? 0;
    if (matching === 0) return [];
    const exact = matching <= Math.min(ENGINE_MAX, exactScanBound(k));
    const engineK = exact ? matching : approximateK;
    // A filter (match_all when there is none) makes Lucene score every row exactly once the
    // filter passes no more rows than k.
    const query = knnQuery(engineK, exact ? filtered ?? { match_all: {} } : filtered);
    let size = Math.min(engineK, k + KNN_SLACK);
    let hits = exact ? undefined : approximate!.hits.hits;
    for (;;) {
      hits ??= (await this.base.search<KnnSource>(this.base.drawers, page(size, query))).hits.hits;
      const scored = hits
        .map((h) => ({ drawer: fromSource(h._source!), distance: cosineDistance(vector, vectorFromSource(h._source!)) }))
        .sort((a, b) => a.distance - b.distance || (a.drawer.id < b.drawer.id ? -1 : a.drawer.id > b.drawer.id ? 1 : 0));
      const top = scored.slice(0, k);
      if (hits.length < size || size >= engineK || top.length < k) return top;
      // Rows the engine ranked below the last fetched one have cosine ≤ 2·score − 1 (+ error).
      const lowestScore = hits[hits.length - 1]!._score ?? 0;
      const unseenDistance = 2 - 2 * lowestScore - 2 * ENGINE_SCORE_ERROR;
      if (unseenDistance > top[k - 1]!.distance) return top;
      size = Math.min(engineK, size * 2);
      hits = undefined;
    }
  }

  async lexical(tokens: string[], k: number, filter?: DrawerFilter): Promise<Drawer[]> {
    checkStrings('tokens', tokens);
    checkInt('k', k, 1, K_MAX);
    const unique = [...new Set(tokens.filter((t) => t.trim() !== ''))];
    if (unique.length === 0) return [];
    const all = await this.statistics.read(unique.map(asciiLower));
    const kept = informativeTokenPositions(all.documentFrequency, all.rows);
    const terms = kept.map((i) => asciiLower(unique[i]!));
    const stats = { ...all, documentFrequency: kept.map((i) => all.documentFrequency[i]!) };
    const clauses = filterClauses(filter);
    const window = Math.min(ENGINE_MAX, Math.max(LEXICAL_WINDOW_MIN, k * LEXICAL_WINDOW_PER_K));
    // The window's rows come with their token streams, so each query token's exact frequency
    // and the row's length are counted here, and with their content, so nothing is fetched again.
    const res = await this.base.search<DrawerSource & { lexical: string }>(this.base.drawers, {
      size: window,
      _source: [...DRAWER_SOURCE, 'lexical'],
      query: { bool: { filter: clauses, should: terms.map((t) => ({ term: { lexical: t } })), minimum_should_match: 1 } },
      sort: [{ _score: 'desc' }, { id: 'asc' }],
    });
    const rows = new Map(res.hits.hits.map((h) => [h._source!.id, h._source!]));
    const matches: LexicalMatch[] = [...rows.values()].map((row) => lexicalMatch(row.id, row.lexical, terms));
    return rankLikeFts5(matches, stats, k).map((m) => fromSource(rows.get(m.id)!));
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
