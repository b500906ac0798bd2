/**
 * One vector search on OpenSearch as a sequence of searches, so that its first two can travel in
 * one `_msearch` alone (`knn`) or with a union search's other legs (`candidatePool`):
 *
 * - first the scope's count and a page of nearest rows. When the filter matches few enough rows
 *   (the embedded adapter's exact-scan bound) the engine is asked for all of them, which makes
 *   Lucene score every filtered row exactly; otherwise HNSW gives at least `EF_SEARCH`
 *   candidates. Which of the two the first page asks for is a guess from the palace's size when
 *   last seen; a wrong guess of "approximate" costs one more search, of "exact" a wider graph walk.
 * - distances are exact (exact-distance.ts) and the rows re-sorted by (exact distance, id); the
 *   fetch widens until no row the engine ranked lower could beat the k-th by exact distance.
 */
import { invalidArgument } from '../../core/errors.js';
import type { VectorHit } from '../ports/drawers/drawer-index.js';
import { checkInt } from '../shared/drawers/port-args.js';
import { exactScanBound } from '../shared/drawers/exact-scan.js';
import { DRAWER_SOURCE, fromSource } from './drawer-documents.js';
import type { DrawerSource, SearchBody } from './drawer-indices.js';
import type { FilterClause } from './drawer-filter-query.js';
import { distanceOfHit, exactDotField } from './exact-distance.js';

/** OpenSearch's ceiling for `k`, `size` and `from + size`. */
export const ENGINE_MAX = 10_000;
/** The largest k the port's searches take. */
export const K_MAX = 10_000;
/**
 * HNSW candidates asked for when the search is approximate, unless the palace's settings say
 * otherwise: 200 reached recall@20 0.992 on real embeddings with the m 32 graph, where 100 gave
 * 0.975 (bench/README.md, "ef, m and the segments a load leaves").
 */
export const EF_SEARCH = 200;
/** Rows fetched beyond k before the exact re-sort; widened when the bound below needs it. */
const KNN_SLACK = 16;
/** Lucene's float cosine may differ from the exact one by this much on the score scale [0, 1]. */
const ENGINE_SCORE_ERROR = 1e-5;

type Body = Record<string, unknown>;

function byDistance(a: VectorHit, b: VectorHit): number {
  return a.distance - b.distance || (a.drawer.id < b.drawer.id ? -1 : a.drawer.id > b.drawer.id ? 1 : 0);
}

/**
 * A checked knn leg of `k` rows nearest to `vector` among `dimension`-d vectors; its first page is
 * exact when the palace held few enough rows when last seen (`lastRows`), else an HNSW walk with
 * `efSearch` candidates.
 */
export function knnLeg(
  dimension: number,
  vector: Float32Array,
  k: number,
  clauses: FilterClause[],
  lastRows: number | undefined,
  efSearch = EF_SEARCH,
): KnnLeg {
  if (!(vector instanceof Float32Array) || vector.length !== dimension) {
    throw invalidArgument('vector', 'dimension', `vector must be a Float32Array of ${dimension} numbers`);
  }
  checkInt('k', k, 1, K_MAX);
  return new KnnLeg(vector, k, clauses, lastRows !== undefined && lastRows <= exactScanBound(k), efSearch);
}

export class KnnLeg {
  private readonly filtered: FilterClause | undefined;
  /** The largest scope searched exactly. */
  private readonly bound: number;
  private query: FilterClause;
  /** Rows the query can return at most. */
  private limit: number;
  private size: number;
  /** Rows matching the filter, once the first answers are read. */
  matching = 0;

  /** `exactLikely`: the palace was small enough for an exact search when last seen. */
  constructor(
    private readonly vector: Float32Array,
    private readonly k: number,
    clauses: FilterClause[],
    private readonly exactLikely: boolean,
    efSearch: number,
  ) {
    this.filtered = clauses.length > 0 ? { bool: { filter: clauses } } : undefined;
    this.bound = Math.min(ENGINE_MAX, exactScanBound(k));
    this.limit = exactLikely ? this.bound : Math.min(ENGINE_MAX, Math.max(k, efSearch));
    this.query = this.knnQuery(this.limit, exactLikely);
    this.size = Math.min(this.limit, k + KNN_SLACK);
  }

  // A filter (match_all when there is none) makes Lucene score every row exactly once the filter
  // passes no more rows than k.
  private knnQuery(engineK: number, exact: boolean): FilterClause {
    const filter = exact ? this.filtered ?? { match_all: {} } : this.filtered;
    return { knn: { embedding: { vector: Array.from(this.vector), k: engineK, ...(filter ? { filter } : {}) } } };
  }

  /** The scope's count and the first page of nearest rows. */
  first(): [Body, Body] {
    return [{ size: 0, track_total_hits: true, query: this.filtered ?? { match_all: {} } }, this.next()];
  }

  /** The page to search next. */
  next(): Body {
    return { size: this.size, query: this.query, _source: DRAWER_SOURCE, script_fields: exactDotField(this.vector) };
  }

  /** Reads the answers to `first()`: the hits when final, else undefined (search `next()` and `read` it). */
  private readFirst(counted: SearchBody<never>, page: SearchBody<DrawerSource>): VectorHit[] | undefined {
    this.matching = counted.hits.total?.value ?? 0;
    if (this.matching === 0) return [];
    const exact = this.matching <= this.bound;
    if (exact && !this.exactLikely) {
      this.limit = this.matching;
      this.query = this.knnQuery(this.matching, true);
      this.size = Math.min(this.limit, this.k + KNN_SLACK);
      return undefined;
    }
    if (exact) this.limit = this.matching;
    return this.read(page);
  }

  /** The hits, from the answers to `first()` and as many further pages as `search` must fetch. */
  async finish(counted: SearchBody<never>, page: SearchBody<DrawerSource>, search: (body: Body) => Promise<SearchBody<DrawerSource>>): Promise<VectorHit[]> {
    let hits = this.readFirst(counted, page);
    while (!hits) hits = this.read(await search(this.next()));
    return hits;
  }

  /** Reads a page: the hits when final, else undefined after widening the next page. */
  private read(page: SearchBody<DrawerSource>): VectorHit[] | undefined {
    const hits = page.hits.hits;
    const scored = hits.map((h) => ({ drawer: fromSource(h._source!), distance: distanceOfHit(h)! })).sort(byDistance);
    const top = scored.slice(0, this.k);
    if (hits.length < this.size || this.size >= this.limit || top.length < this.k) return top;
    // Rows the engine ranked below the last fetched one have cosine ≤ 2·score − 1 (+ error).
    const lowestScore = hits[hits.length - 1]!._score ?? 0;
    const unseenDistance = 2 - 2 * lowestScore - 2 * ENGINE_SCORE_ERROR;
    if (unseenDistance > top[this.k - 1]!.distance) return top;
    this.size = Math.min(this.limit, this.size * 2);
    return undefined;
  }
}
