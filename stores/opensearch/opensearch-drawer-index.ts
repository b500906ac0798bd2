/**
 * The cluster profile's `DrawerIndex` on OpenSearch 2.19 with the k-NN plugin (Lucene HNSW).
 * Observable behaviour is the embedded adapter's (the contract suite checks it):
 *
 * - Vector search pushes the filter into the `knn` query (efficient filtering). When the filter
 *   matches few enough rows (the embedded adapter's exact-scan bound) the engine is asked for all
 *   of them, which makes Lucene score every filtered row exactly; otherwise HNSW gives at least
 *   `EF_SEARCH` candidates. Either way distances are recomputed from the stored vectors and the
 *   candidates re-sorted by (exact distance, id); the fetch widens until no row the engine ranked
 *   lower could beat the k-th by exact distance.
 * - Lexical candidates: rows matching any token (BM25 term queries on the token field, filters
 *   pushed down), chosen and ordered like the embedded FTS5 `bm25()` (lexical-rank.ts); exact
 *   whenever the matches fit the re-ranked window.
 * - Writes are bulk requests keyed by the drawer id with `require_alias`, and refresh before they
 *   return (`refresh` option), so the caller that wrote reads its writes.
 * - Bulk deletes are `_delete_by_query` with the filter; listings, taxonomy and sources are
 *   sorted searches and composite aggregations, exact at any size.
 *
 * OpenSearch has no multi-document transactions: `upsert` validates the whole batch before
 * sending anything, and `replaceFile` writes new rows first, then deletes the file's stale rows,
 * then records the file state, so an interrupted call leaves a superset that a retry converges.
 */
import type { Client } from '@opensearch-project/opensearch';
import type { Drawer, DrawerMeta, DrawerWrite } from '../../core/drawer.js';
import { PalaceError, invalidArgument, storeUnavailable } from '../../core/errors.js';
import { cosineDistance } from '../../core/vector.js';
import { decodeCursor, encodeCursor } from '../shared/drawers/cursor.js';
import type { DrawerFilter, DrawerIndex, DrawerMetadataRow, DrawerPage, SourceRow, TaxonomyRow, VectorHit } from '../ports/drawers/drawer-index.js';
import type { FileReplacement, FileState } from '../ports/drawers/file-states.js';
import type { PalaceModelRecord } from '../ports/drawers/palace-model.js';
import { OPENSEARCH_STORE, OpenSearchConnection, backoffMs, openSearchFailure } from './connection.js';
import type { OpenSearchConnectionOptions } from './connection.js';
import { DRAWER_SOURCE, documentId, fromSource, toDocument, vectorFromSource } from './drawer-documents.js';
import { filterClauses, filterIsEmpty, filterQuery } from './drawer-filter-query.js';
import type { FilterClause } from './drawer-filter-query.js';
import { aliasName, ensureIndices, metaIndexName, storedDimension } from './drawer-mapping.js';
import { fileStateId, fromFileStateSource, toFileStateDocument } from './file-state-documents.js';
import type { FileStateDocument } from './file-state-documents.js';
import { rankLikeFts5 } from './lexical-rank.js';
import type { LexicalMatch } from './lexical-rank.js';
import { asciiLower, informativeTokenPositions } from '../shared/drawers/lexical-tokens.js';
import { checkDrawerBatch, checkEmbeddingMap, checkFileReplacements, checkFileState, checkInt, checkNonEmpty, checkStrings, modelRecordText } from '../shared/drawers/port-args.js';

export const DEFAULT_DIMENSION = 384;
/** The one document of the palace's meta index: the model record (a PalaceModelRecord), as modelRecordText. */
const MODEL_DOCUMENT = 'model';

/** The embedded adapter's exact-scan bound: filters matching at most this many rows (or k·50). */
const EXACT_SCAN_MAX = 4000;
const EXACT_SCAN_PER_K = 50;
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
/** The `lexical_tf` clauses score `freq · boost`; tiny so they barely touch the BM25 order. */
const TF_BOOST = 1e-6;
const K_MAX = 10_000;
const PAGE_MAX = 10_000;
const BULK_DOCS = 500;
/** Files per `_delete_by_query` of a replaceFiles batch: well under the engine's 1 024-clause limit. */
const DELETE_FILES_PER_QUERY = 256;
const BULK_ATTEMPTS = 4;
const COMPOSITE_PAGE = 1000;
/** Groups per request while `list` walks the logical drawers. */
const GROUP_WALK = 10_000;

export type RefreshPolicy = true | 'wait_for' | false;

export interface OpenSearchDrawerIndexOptions extends OpenSearchConnectionOptions {
  dimension?: number;
  /**
   * When writes become visible to searches: `true` (default) refreshes the index before the write
   * returns; `'wait_for'` waits for the next scheduled refresh (up to 1 s); `false` leaves it to
   * the schedule (bulk loads that call `refresh()` at the end).
   */
  refresh?: RefreshPolicy;
}

interface Hit<S> {
  _id: string;
  _score: number | null;
  _source?: S;
  fields?: Record<string, unknown[]>;
  sort?: unknown[];
  matched_queries?: Record<string, number> | string[];
}

interface SearchBody<S> {
  hits: { total?: { value: number }; hits: Hit<S>[] };
  aggregations?: Record<string, unknown>;
}

interface BulkItem {
  status: number;
  result?: string;
  error?: { type?: string; reason?: string };
}

type DrawerSource = { id: string; content: string; meta: DrawerMeta };

function withFilter(query: FilterClause, clauses: FilterClause[]): FilterClause {
  return clauses.length === 0 ? query : { bool: { must: [query], filter: clauses } };
}

/** The first `limit` of `rows` (which holds up to limit + 1), with a cursor when more follow. */
function page<T>(rows: T[], limit: number, cursorOf: (row: T) => string): { items: T[]; next?: string } {
  if (rows.length <= limit) return { items: rows };
  const items = rows.slice(0, limit);
  return { items, next: cursorOf(items[items.length - 1]!) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class OpenSearchDrawerIndex implements DrawerIndex {
  readonly storeName = OPENSEARCH_STORE;
  private readonly drawers: string;
  private readonly states: string;
  private readonly meta: string;

  private constructor(
    private readonly conn: OpenSearchConnection,
    readonly dimension: number,
    private readonly refreshPolicy: RefreshPolicy,
  ) {
    this.drawers = aliasName(conn, 'drawers');
    this.states = aliasName(conn, 'file-states');
    this.meta = metaIndexName(conn);
  }

  /** Opens the palace's indices, creating them (templates, `-v1` indices, aliases) if needed. */
  static async open(options: OpenSearchDrawerIndexOptions): Promise<OpenSearchDrawerIndex> {
    if (options.dimension !== undefined) checkInt('dimension', options.dimension, 1, 16_000);
    const conn = new OpenSearchConnection(options);
    try {
      const stored = await storedDimension(conn);
      if (stored !== undefined && options.dimension !== undefined && stored !== options.dimension) {
        throw invalidArgument('dimension', 'matches_palace', `the palace stores ${stored}-dimensional embeddings, not ${options.dimension}`);
      }
      const dimension = stored ?? options.dimension ?? DEFAULT_DIMENSION;
      await ensureIndices(conn, dimension);
      return new OpenSearchDrawerIndex(conn, dimension, options.refresh ?? true);
    } catch (e) {
      await conn.close();
      throw openSearchFailure(e);
    }
  }

  /** The connection, for index administration (reindexTo, dropPalaceIndices). */
  get connection(): OpenSearchConnection {
    return this.conn;
  }

  private call<T>(fn: (client: Client) => Promise<{ body: unknown }>): Promise<T> {
    return this.conn.call(async (c) => (await fn(c)).body as T);
  }

  private search<S>(index: string, body: Record<string, unknown>, params: Record<string, unknown> = {}): Promise<SearchBody<S>> {
    return this.call<SearchBody<S>>((c) => c.search({ index, body, ...params }));
  }

  /** Makes every write so far visible to searches (after loads written with `refresh: false`). */
  async refresh(): Promise<void> {
    await this.call((c) => c.indices.refresh({ index: `${this.drawers},${this.states}` }));
  }

  // -------------------------------------------------------------------------------------------
  // Writes

  /**
   * Sends bulk operations in chunks, retrying items the node refused as busy or unavailable
   * (each operation is idempotent: index or delete by id). Returns the items in order.
   */
  private async bulk(index: string, ops: { action: Record<string, unknown>; doc?: object }[], refresh = this.refreshPolicy): Promise<BulkItem[]> {
    const out: BulkItem[] = [];
    for (let start = 0; start < ops.length; start += BULK_DOCS) {
      let pending = ops.slice(start, start + BULK_DOCS).map((op, i) => ({ op, at: out.length + i }));
      out.push(...pending.map(() => ({ status: 0 })));
      for (let attempt = 1; pending.length > 0; attempt++) {
        const body = pending.flatMap(({ op }) => (op.doc === undefined ? [op.action] : [op.action, op.doc]));
        const res = await this.call<{ errors: boolean; items: Record<string, BulkItem>[] }>((c) =>
          c.bulk({ index, body, require_alias: true, refresh: refresh === false ? false : refresh === true ? 'true' : 'wait_for' }),
        );
        const retry: typeof pending = [];
        let refused: BulkItem | undefined;
        res.items.forEach((item, i) => {
          const result = Object.values(item)[0]!;
          const p = pending[i]!;
          out[p.at] = result;
          if (!result.error) return;
          if (result.status === 429 || result.status >= 500) retry.push(p);
          else refused ??= result;
        });
        if (refused) {
          throw new PalaceError('internal', `opensearch refused a bulk write: ${refused.error!.type}: ${refused.error!.reason}`, { store: OPENSEARCH_STORE });
        }
        if (retry.length > 0 && attempt >= BULK_ATTEMPTS) {
          const first = out[retry[0]!.at]!;
          throw storeUnavailable(OPENSEARCH_STORE, new Error(`${retry.length} bulk items refused (${first.status} ${first.error!.type}: ${first.error!.reason})`));
        }
        pending = retry;
        if (pending.length > 0) await sleep(backoffMs(attempt));
      }
    }
    return out;
  }

  private indexOps(drawers: readonly DrawerWrite[]) {
    return drawers.map((d) => ({ action: { index: { _id: documentId(d.id) } }, doc: toDocument(d) }));
  }

  async upsert(drawers: DrawerWrite[]): Promise<void> {
    checkDrawerBatch('drawers', drawers, this.dimension);
    if (drawers.length === 0) return;
    await this.bulk(this.drawers, this.indexOps(drawers));
  }

  async delete(ids: string[]): Promise<number> {
    checkStrings('ids', ids);
    if (ids.length === 0) return 0;
    const unique = [...new Set(ids)];
    const items = await this.bulk(this.drawers, unique.map((id) => ({ action: { delete: { _id: documentId(id) } } })));
    return items.filter((i) => i.result === 'deleted').length;
  }

  /** `_delete_by_query` until no version conflict (a row rewritten meanwhile) is left over. */
  private async deleteByQuery(index: string, query: FilterClause, refresh = this.refreshPolicy !== false): Promise<number> {
    let deleted = 0;
    for (let round = 0; ; round++) {
      const res = await this.call<{ deleted: number; version_conflicts: number; failures?: unknown[] }>((c) =>
        c.deleteByQuery({ index, body: { query }, refresh, conflicts: 'proceed', wait_for_completion: true }),
      );
      if (res.failures && res.failures.length > 0) throw openSearchFailure(new Error(`delete by query failed: ${JSON.stringify(res.failures[0])}`));
      deleted += res.deleted;
      if (res.version_conflicts === 0 || round >= 4) return deleted;
    }
  }

  async deleteWhere(filter: DrawerFilter): Promise<number> {
    if (filterIsEmpty(filter)) throw invalidArgument('filter', 'non_empty', 'deleteWhere needs at least one filter key; refusing to delete every drawer');
    return this.deleteByQuery(this.drawers, filterQuery(filter));
  }

  async replaceFile(wing: string, sourceFile: string, drawers: DrawerWrite[], state: FileState): Promise<void> {
    return this.replaceFiles(wing, [{ sourceFile, drawers, state }]);
  }

  /**
   * New rows first, then the files' other rows deleted, then the states: a crash in between
   * leaves extra rows or an old state, never a file without its rows, and a retry converges.
   * Nothing refreshes until the end, where one refresh (unless the policy is `false`) makes the
   * whole batch visible at once: per-file refreshes made one segment per file.
   */
  async replaceFiles(wing: string, files: FileReplacement[]): Promise<void> {
    const drawers = checkFileReplacements(wing, files, this.dimension);
    if (files.length === 0) return;
    if (drawers.length > 0) await this.bulk(this.drawers, this.indexOps(drawers), false);
    for (let i = 0; i < files.length; i += DELETE_FILES_PER_QUERY) {
      const group = files.slice(i, i + DELETE_FILES_PER_QUERY).map((f) => ({
        bool: { filter: [{ term: { source_file: f.sourceFile } }], must_not: f.drawers.length > 0 ? [{ terms: { id: f.drawers.map((d) => d.id) } }] : [] },
      }));
      await this.deleteByQuery(this.drawers, { bool: { filter: [{ term: { wing } }], should: group, minimum_should_match: 1 } }, false);
    }
    await this.bulk(this.states, files.map((f) => ({ action: { index: { _id: fileStateId(wing, f.sourceFile) } }, doc: toFileStateDocument(f.state) })), false);
    if (this.refreshPolicy !== false) await this.refresh();
  }

  async replaceEmbeddings(vectors: Map<string, Float32Array>): Promise<number> {
    checkEmbeddingMap(vectors, this.dimension);
    if (vectors.size === 0) return 0;
    // A partial update of a missing document is refused; only rows that exist are rewritten.
    const stored = await this.fetchSources<{ id: string }>([...vectors.keys()], ['id']);
    const ops = [...stored.keys()].map((id) => ({ action: { update: { _id: documentId(id) } }, doc: { doc: { embedding: Array.from(vectors.get(id)!) } } }));
    await this.bulk(this.drawers, ops);
    return ops.length;
  }

  /** The model record document with its sequence number and primary term, for compare-and-set. */
  private async modelDocument(): Promise<{ text: string; ifSeqNo: number; ifPrimaryTerm: number } | undefined> {
    return this.conn.call(async (c) => {
      const res = await c.get({ index: this.meta, id: MODEL_DOCUMENT }, { ignore: [404] });
      const body = res.body as { found?: boolean; _source?: { record: string }; _seq_no: number; _primary_term: number };
      if (res.statusCode === 404 || body.found !== true || body._source === undefined) return undefined;
      return { text: body._source.record, ifSeqNo: body._seq_no, ifPrimaryTerm: body._primary_term };
    });
  }

  async readModel(): Promise<PalaceModelRecord | undefined> {
    const doc = await this.modelDocument();
    return doc === undefined ? undefined : (JSON.parse(doc.text) as PalaceModelRecord);
  }

  async writeModel(next: PalaceModelRecord, expected: PalaceModelRecord | undefined): Promise<boolean> {
    const nextText = modelRecordText(next);
    const expectedText = expected === undefined ? undefined : modelRecordText(expected);
    let guard: Record<string, unknown> = { op_type: 'create' };
    if (expectedText !== undefined) {
      const current = await this.modelDocument();
      if (current === undefined || current.text !== expectedText) return false;
      guard = { if_seq_no: current.ifSeqNo, if_primary_term: current.ifPrimaryTerm };
    } else {
      await this.conn.call((c) =>
        c.indices.create({ index: this.meta, body: { settings: { number_of_shards: 1, number_of_replicas: 0 }, mappings: { dynamic: false, properties: {} } }, wait_for_active_shards: '1' }, { ignore: [400] }),
      );
    }
    // A version conflict (409) means another writer got there first: nothing written.
    const status = await this.conn.call(async (c) => (await c.index({ index: this.meta, id: MODEL_DOCUMENT, body: { record: nextText }, refresh: true, ...guard }, { ignore: [409] })).statusCode);
    return status !== 409;
  }

  // -------------------------------------------------------------------------------------------
  // Reads

  private async fetchSources<S>(ids: string[], includes: string[]): Promise<Map<string, S>> {
    const res = await this.call<{ docs: { found: boolean; _source?: S & { id: string } }[] }>((c) =>
      c.mget({ index: this.drawers, body: { ids: [...new Set(ids)].map(documentId) }, _source_includes: includes }),
    );
    return new Map(res.docs.filter((d) => d.found && d._source).map((d) => [d._source!.id, d._source!]));
  }

  async get(ids: string[]): Promise<Drawer[]> {
    checkStrings('ids', ids);
    if (ids.length === 0) return [];
    const byId = await this.fetchSources<DrawerSource>(ids, DRAWER_SOURCE);
    return ids.flatMap((id) => {
      const s = byId.get(id);
      return s ? [fromSource(s)] : [];
    });
  }

  async embeddings(ids: string[]): Promise<Map<string, Float32Array>> {
    checkStrings('ids', ids);
    const out = new Map<string, Float32Array>();
    if (ids.length === 0) return out;
    const byId = await this.fetchSources<{ id: string; embedding: number[] }>(ids, ['id', 'embedding']);
    for (const [id, s] of byId) out.set(id, vectorFromSource(s));
    return out;
  }

  async knn(vector: Float32Array, k: number, filter?: DrawerFilter): Promise<VectorHit[]> {
    if (!(vector instanceof Float32Array) || vector.length !== this.dimension) {
      throw invalidArgument('vector', 'dimension', `vector must be a Float32Array of ${this.dimension} numbers`);
    }
    checkInt('k', k, 1, K_MAX);
    const clauses = filterClauses(filter);
    const matching = await this.countClauses(clauses);
    if (matching === 0) return [];
    const exact = matching <= Math.min(ENGINE_MAX, Math.max(EXACT_SCAN_MAX, k * EXACT_SCAN_PER_K));
    const engineK = exact ? matching : Math.min(ENGINE_MAX, Math.max(k, EF_SEARCH));
    // A filter (match_all when there is none) makes Lucene score every row exactly once the
    // filter passes no more rows than k.
    const knnFilter = clauses.length > 0 ? { bool: { filter: clauses } } : exact ? { match_all: {} } : undefined;
    const query = { knn: { embedding: { vector: Array.from(vector), k: engineK, ...(knnFilter ? { filter: knnFilter } : {}) } } };
    for (let size = Math.min(engineK, k + KNN_SLACK); ; size = Math.min(engineK, size * 2)) {
      const res = await this.search<DrawerSource & { embedding: number[] }>(this.drawers, { size, query, _source: [...DRAWER_SOURCE, 'embedding'] });
      const hits = res.hits.hits;
      const scored = hits
        .map((h) => ({ drawer: fromSource(h._source!), distance: cosineDistance(vector, vectorFromSource(h._source!)) }))
        .sort((a, b) => a.distance - b.distance || (a.drawer.id < b.drawer.id ? -1 : a.drawer.id > b.drawer.id ? 1 : 0));
      const top = scored.slice(0, k);
      if (hits.length < size || size >= engineK || top.length < k) return top;
      // Rows the engine ranked below the last fetched one have cosine ≤ 2·score − 1 (+ error).
      const lowestScore = hits[hits.length - 1]!._score ?? 0;
      const unseenDistance = 2 - 2 * lowestScore - 2 * ENGINE_SCORE_ERROR;
      if (unseenDistance > top[k - 1]!.distance) return top;
    }
  }

  private async corpusStats(terms: string[]): Promise<{ rows: number; tokens: number; documentFrequency: number[] }> {
    const res = await this.search<never>(this.drawers, {
      size: 0,
      track_total_hits: true,
      query: { match_all: {} },
      aggs: {
        tokens: { sum: { field: 'lexical_length' } },
        df: { filters: { filters: Object.fromEntries(terms.map((t, i) => [String(i), { term: { lexical: t } }])) } },
      },
    });
    const aggs = res.aggregations as { tokens: { value: number }; df: { buckets: Record<string, { doc_count: number }> } };
    return { rows: res.hits.total?.value ?? 0, tokens: aggs.tokens.value, documentFrequency: terms.map((_, i) => aggs.df.buckets[String(i)]?.doc_count ?? 0) };
  }

  async lexical(tokens: string[], k: number, filter?: DrawerFilter): Promise<Drawer[]> {
    checkStrings('tokens', tokens);
    checkInt('k', k, 1, K_MAX);
    const unique = [...new Set(tokens.filter((t) => t.trim() !== ''))];
    if (unique.length === 0) return [];
    const all = await this.corpusStats(unique.map(asciiLower));
    const kept = informativeTokenPositions(all.documentFrequency, all.rows);
    const terms = kept.map((i) => asciiLower(unique[i]!));
    const stats = { ...all, documentFrequency: kept.map((i) => all.documentFrequency[i]!) };
    const clauses = filterClauses(filter);
    const window = Math.min(ENGINE_MAX, Math.max(LEXICAL_WINDOW_MIN, k * LEXICAL_WINDOW_PER_K));
    const res = await this.search<never>(
      this.drawers,
      {
        size: window,
        _source: false,
        docvalue_fields: ['id', 'lexical_length'],
        query: {
          bool: {
            filter: clauses,
            should: [...terms.map((t) => ({ term: { lexical: t } })), ...terms.map((t, i) => ({ term: { lexical_tf: { value: t, boost: TF_BOOST, _name: String(i) } } }))],
            minimum_should_match: 1,
          },
        },
        sort: [{ _score: 'desc' }, { id: 'asc' }],
      },
      { include_named_queries_score: true },
    );
    const matches: LexicalMatch[] = res.hits.hits.map((h) => {
      const named = (h.matched_queries ?? {}) as Record<string, number>;
      return {
        id: h.fields!.id![0] as string,
        length: h.fields!.lexical_length![0] as number,
        frequency: terms.map((_, i) => Math.round((named[String(i)] ?? 0) / TF_BOOST)),
      };
    });
    const ranked = rankLikeFts5(matches, stats, k);
    return this.get(ranked.map((m) => m.id));
  }

  private async countClauses(clauses: FilterClause[]): Promise<number> {
    const res = await this.call<{ count: number }>((c) => c.count({ index: this.drawers, body: { query: clauses.length === 0 ? { match_all: {} } : { bool: { filter: clauses } } } }));
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
      const res = await this.search<DrawerSource>(this.drawers, {
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
  private async composite(fields: string[], clauses: FilterClause[], size: number, after?: Record<string, string>): Promise<{ key: Record<string, string>; doc_count: number }[]> {
    const res = await this.search<never>(this.drawers, {
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
    return page(rows, limit, (r) => encodeCursor(r.wing, r.source_file));
  }

  // -------------------------------------------------------------------------------------------
  // File states

  async fileStates(wing: string, sourceFiles: string[]): Promise<Map<string, FileState>> {
    checkNonEmpty('wing', wing);
    checkStrings('sourceFiles', sourceFiles);
    const out = new Map<string, FileState>();
    if (sourceFiles.length === 0) return out;
    const res = await this.call<{ docs: { found: boolean; _source?: FileStateDocument }[] }>((c) =>
      c.mget({ index: this.states, body: { ids: [...new Set(sourceFiles)].map((f) => fileStateId(wing, f)) } }),
    );
    for (const d of res.docs) if (d.found && d._source) out.set(d._source.source_file, fromFileStateSource(d._source));
    return out;
  }

  async listFileStates(wing: string | undefined, after: string | undefined, limit: number): Promise<{ items: FileState[]; next?: string }> {
    if (wing !== undefined) checkNonEmpty('wing', wing);
    checkInt('limit', limit, 1, PAGE_MAX);
    const resume = after === undefined ? undefined : decodeCursor('after', after);
    const res = await this.search<FileStateDocument>(this.states, {
      size: limit + 1,
      query: wing === undefined ? { match_all: {} } : { bool: { filter: [{ term: { wing } }] } },
      sort: [{ wing: 'asc' }, { source_file: 'asc' }],
      ...(resume ? { search_after: resume } : {}),
    });
    return page(res.hits.hits.map((h) => fromFileStateSource(h._source!)), limit, (s) => encodeCursor(s.wing, s.source_file));
  }

  async deleteFileStates(wing: string, sourceFiles: string[]): Promise<number> {
    checkNonEmpty('wing', wing);
    checkStrings('sourceFiles', sourceFiles);
    if (sourceFiles.length === 0) return 0;
    const ids = [...new Set(sourceFiles.map((f) => fileStateId(wing, f)))];
    const items = await this.bulk(this.states, ids.map((id) => ({ action: { delete: { _id: id } } })));
    return items.filter((i) => i.result === 'deleted').length;
  }

  async scanMetadata(filter: DrawerFilter, after: string | undefined, limit: number): Promise<DrawerMetadataRow[]> {
    checkInt('limit', limit, 1, PAGE_MAX);
    const res = await this.search<{ id: string; meta: DrawerMeta }>(this.drawers, {
      size: limit,
      _source: ['id', 'meta'],
      query: filterQuery(filter),
      sort: [{ id: 'asc' }],
      ...(after === undefined ? {} : { search_after: [after] }),
    });
    return res.hits.hits.map((h) => ({ id: h._source!.id, meta: h._source!.meta }));
  }

  async scanRows(after: string | undefined, limit: number): Promise<DrawerWrite[]> {
    checkInt('limit', limit, 1, PAGE_MAX);
    const res = await this.search<DrawerSource & { embedding: number[] }>(this.drawers, {
      size: limit,
      _source: [...DRAWER_SOURCE, 'embedding'],
      query: { match_all: {} },
      sort: [{ id: 'asc' }],
      ...(after === undefined ? {} : { search_after: [after] }),
    });
    return res.hits.hits.map((h) => ({ ...fromSource(h._source!), embedding: vectorFromSource(h._source!) }));
  }

  async putFileStates(states: FileState[]): Promise<void> {
    for (const s of states) checkFileState(s);
    if (states.length === 0) return;
    await this.bulk(this.states, states.map((s) => ({ action: { index: { _id: fileStateId(s.wing, s.source_file) } }, doc: toFileStateDocument(s) })));
  }

  async close(): Promise<void> {
    await this.conn.close();
  }
}

/** The factory the composition root (stores/open.ts) calls. */
export async function openOpenSearchDrawerIndex(options: OpenSearchDrawerIndexOptions): Promise<OpenSearchDrawerIndex> {
  return OpenSearchDrawerIndex.open(options);
}

