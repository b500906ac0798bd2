/**
 * The drawer index port: verbatim drawers with their vectors and lexical text, the file states
 * mining keeps beside them, and the palace's model record. Implemented by `embedded/` (SQLite)
 * and `opensearch/`; tests/contract/drawer-index.contract.ts defines its meaning.
 */
import type { Drawer, DrawerMeta, DrawerWrite } from '../../core/drawer.js';
import type { ModelIdentity } from '../../embed/model-identity.js';

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

/** What mining remembers about one file of one wing (DECISIONS, palace behaviour 2 and 12). */
export interface FileState {
  wing: string;
  source_file: string;
  size: number;
  mtime_ms: number;
  content_sha256: string;
  /** Drawer ids this file produced at its last mine. */
  drawer_count: number;
  mined_at: string;
  /** Extra facts (mined commit, skip reason, normalise version). */
  extra?: Record<string, string | number | boolean>;
}

/** One file's new drawers and state, for `DrawerIndex.replaceFiles`. */
export interface FileReplacement {
  sourceFile: string;
  drawers: DrawerWrite[];
  state: FileState;
}

/**
 * Which model's vectors a palace holds (palace/palace-model.ts gives it its meaning): recorded
 * when the palace is first opened by a process that embeds, rewritten only by `mempalace reembed`.
 */
export interface PalaceModelRecord {
  model: ModelIdentity;
  /** A re-embed under way: every vector is being rewritten with `target` by job `jobId`. */
  reembed?: { target: ModelIdentity; jobId: string };
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

  /**
   * Replace everything one file contributed to one wing: delete that file's rows not in
   * `drawers`, upsert `drawers`, then record `state`. Atomic where the engine allows it; always
   * idempotent, so a retried batch converges.
   */
  replaceFile(wing: string, sourceFile: string, drawers: DrawerWrite[], state: FileState): Promise<void>;
  /**
   * `replaceFile` for several files of one wing at once (a mining batch): the same result as
   * replacing them one after another, in one transaction (embedded) or one bulk write, one
   * delete-by-query and one refresh (OpenSearch) instead of one of each per file.
   */
  replaceFiles(wing: string, files: FileReplacement[]): Promise<void>;
  fileStates(wing: string, sourceFiles: string[]): Promise<Map<string, FileState>>;

  /** The palace's model record, or undefined when none was written yet. */
  readModel(): Promise<PalaceModelRecord | undefined>;
  /**
   * Writes `next` only when the stored record equals `expected` (undefined: none stored yet), as
   * one atomic compare-and-set; returns whether it wrote.
   */
  writeModel(next: PalaceModelRecord, expected: PalaceModelRecord | undefined): Promise<boolean>;
  /**
   * Replaces the embedding of stored rows by id, leaving their content, metadata and ids as
   * they are; ids not stored are ignored. Returns the number of rows changed.
   */
  replaceEmbeddings(vectors: Map<string, Float32Array>): Promise<number>;
  /** All file states of a wing (or every wing), ordered by (wing, source_file), by cursor. */
  listFileStates(wing: string | undefined, after: string | undefined, limit: number): Promise<{ items: FileState[]; next?: string }>;
  deleteFileStates(wing: string, sourceFiles: string[]): Promise<number>;

  /**
   * Backup and migration: up to `limit` rows with their embeddings, every row once, ordered by
   * id ascending (byte order of the UTF-8 text), starting after the row id `after`.
   */
  scanRows(after: string | undefined, limit: number): Promise<DrawerWrite[]>;
  /** Insert or replace file states by (wing, source_file), leaving drawers untouched (restore). */
  putFileStates(states: FileState[]): Promise<void>;

  close(): Promise<void>;
}
