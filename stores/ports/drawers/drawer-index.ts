/**
 * The drawer index port: verbatim drawers with their vectors and lexical text, and the searches
 * over them. The same store also keeps mining's file states (file-states.ts), the palace's model
 * record (palace-model.ts) and the bulk scan and rewrite of rows (drawer-bulk.ts), each its own
 * port. Implemented by `embedded/drawers/` (SQLite) and `opensearch/`;
 * tests/contract/drawer-index.contract.ts defines the meaning of all four.
 */
import type { Drawer, DrawerMeta, DrawerWrite } from '../../../core/drawer.js';

/** Exact-match filters, combined with AND, pushed down into every query of the index. */
export interface DrawerFilter {
  wing?: string | undefined;
  room?: string | undefined;
  /** Exact full stored `source_file`. */
  sourceFile?: string | undefined;
  /** Rows whose `parent_drawer_id` or `parent_entry_id` equals this logical id. */
  parentId?: string | undefined;
  /** Inclusive lower bound on `filed_at` (UTC instant text, as stored). */
  since?: string | undefined;
  /** Exclusive upper bound on `filed_at`. */
  before?: string | undefined;
  /** Any further exact-match metadata keys (e.g. `agent`, `ingest_mode`). */
  meta?: Record<string, string | number | boolean> | undefined;
}

/** A row as `scanMetadata` returns it. */
export interface DrawerMetadataRow {
  id: string;
  meta: DrawerMeta;
}

export interface VectorHit {
  drawer: Drawer;
  /** Cosine distance `1 − cos`, in [0, 2]. */
  distance: number;
}

/** One search's candidate pool, asked of the index at once (`candidatePool`). */
export interface PoolRequest {
  vector: Float32Array;
  /** Candidates per leg. */
  k: number;
  filter?: DrawerFilter | undefined;
  /**
   * The lexical leg's tokens, given the vector leg's hits (the product drops words that the hits
   * show to tell nothing apart, such as common speaker names). An adapter that searches both legs
   * in one request may search `lexicalTokens([])` first, and searches again only when the hits
   * change the tokens the lexical leg matches on.
   */
  lexicalTokens: (hits: readonly VectorHit[]) => string[];
}

export interface CandidatePool {
  /** `knn(vector, k, filter)`. */
  vector: VectorHit[];
  /** The tokens the lexical leg searched: `lexicalTokens(vector)`. */
  tokens: string[];
  /**
   * `lexical(tokens, k, filter)` in its order, each row with its exact cosine distance to the
   * vector (as `knn` computes it); rows without a stored vector are left out.
   */
  lexical: VectorHit[];
  /** `count(filter)`. */
  inScope: number;
}

export interface DrawerPage {
  items: Drawer[];
  /** Number of logical drawers matching the filter. */
  total: number;
}

export interface TaxonomyRow {
  wing: string;
  room: string;
  count: number;
}

export interface SourceRow {
  wing: string;
  source_file: string;
  drawers: number;
}

export interface DrawerIndex {
  /** The store's name in errors (`sqlite`, `opensearch`). */
  readonly storeName: string;
  readonly dimension: number;

  /** Insert or replace rows by id, all or nothing. */
  upsert(drawers: DrawerWrite[]): Promise<void>;
  /** Rows by id, in the order asked, missing ids omitted. */
  get(ids: string[]): Promise<Drawer[]>;
  /** Stored embeddings by id (for exact distances of lexical candidates and dedupe). */
  embeddings(ids: string[]): Promise<Map<string, Float32Array>>;
  delete(ids: string[]): Promise<number>;
  /** Delete every row matching the filter (at least one key must be set); returns the count. */
  deleteWhere(filter: DrawerFilter): Promise<number>;

  /** The `k` nearest rows to `vector` among those matching the filter, nearest first. */
  knn(vector: Float32Array, k: number, filter?: DrawerFilter): Promise<VectorHit[]>;
  /**
   * Up to `k` rows matching any of the lexical `tokens` (as produced by core/lexical), best
   * engine match first. Only the candidate set is contractual; the product ranks it itself.
   */
  lexical(tokens: string[], k: number, filter?: DrawerFilter): Promise<Drawer[]>;
  /**
   * A union search's candidates in one call: the vector leg, the lexical leg on the tokens the
   * vector hits leave, the lexical rows' distances and the scope's size, the same as the separate
   * calls give (an adapter over a network sends them in as few requests as it can).
   */
  candidatePool(request: PoolRequest): Promise<CandidatePool>;

  /**
   * Paged listing of LOGICAL drawers: rows are grouped by logical id (`parent_drawer_id`, else
   * `parent_entry_id`, else the row id) and groups are ordered by logical id ascending; `offset`,
   * `limit` and `total` count groups, and every row of each group on the page is returned,
   * ordered by (logical id, chunk_index, id). A group matches when any of its rows matches.
   */
  list(filter: DrawerFilter, offset: number, limit: number): Promise<DrawerPage>;
  /**
   * Id and metadata (no content, no vector) of up to `limit` rows matching the filter, ordered
   * by id ascending (byte order of the UTF-8 text), starting after the row id `after`. A walk
   * over a whole wing reads each row once, where offset pages of `list` re-read all before them.
   */
  scanMetadata(filter: DrawerFilter, after: string | undefined, limit: number): Promise<DrawerMetadataRow[]>;
  count(filter?: DrawerFilter): Promise<number>;
  /** Drawer counts per (wing, room), sorted by wing then room. */
  taxonomy(filter?: DrawerFilter): Promise<TaxonomyRow[]>;
  /** Distinct sources with drawer counts, ordered by (wing, source_file), resumable by cursor. */
  sources(filter: DrawerFilter, after: string | undefined, limit: number): Promise<{ items: SourceRow[]; next?: string }>;

  close(): Promise<void>;
}
