/**
 * The embedded profile's `DrawerIndex`: SQLite (`<palace>/drawers.sqlite3`) is the system of
 * record for drawers, embeddings, the FTS5 lexical index and file states; an HNSW graph next to
 * it (`drawers.hnsw`) is derived from it and only narrows vector searches. Every write is one
 * SQLite transaction; the graph follows after commit (see ann-drawer-sync.ts). Distances are
 * always recomputed from the stored embeddings, so they are exact whichever path found a row.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Drawer, DrawerMeta, DrawerWrite } from '../../../core/drawer.js';
import { PalaceError, invalidArgument, isPalaceError, storeUnavailable } from '../../../core/errors.js';
import { lexicalText } from '../../../core/lexical.js';
import { cosineDistance } from '../../../core/vector.js';
import { decodeCursor, encodeCursor } from '../../shared/drawers/cursor.js';
import type { DrawerFilter, DrawerIndex, DrawerMetadataRow, DrawerPage, SourceRow, TaxonomyRow, VectorHit } from '../../ports/drawers/drawer-index.js';
import type { FileReplacement, FileState } from '../../ports/drawers/file-states.js';
import type { PalaceModelRecord } from '../../ports/drawers/palace-model.js';
import { DerivedAnnIndex, bumpGeneration } from './ann-drawer-sync.js';
import { filterCondition, filterIsEmpty } from './filter-sql.js';
import type { SqlCondition } from './filter-sql.js';
import { decodeVector, encodeVector, rowToDrawer } from './rows.js';
import type { DrawerRow } from './rows.js';
import { FTS_VOCABULARY, prepareDrawerDatabase, readMeta, writeMeta } from './schema.js';
import { asciiLower, informativeTokenPositions } from '../../shared/drawers/lexical-tokens.js';
import { checkDrawerBatch, checkEmbeddingMap, checkFileReplacements, checkFileState, checkInt, checkNonEmpty, checkStrings, modelRecordText } from '../../shared/drawers/port-args.js';

export const DRAWER_DB_FILE = 'drawers.sqlite3';
export const DRAWER_ANN_FILE = 'drawers.hnsw';
export const DEFAULT_DIMENSION = 384;
/** `palace_meta` key of the palace's model record (a PalaceModelRecord), as modelRecordText. */
const MODEL_META_KEY = 'model';

/**
 * Filters matching at most this many rows (or k·50) are answered by an exact scan, the bound
 * both profiles share (so both are exact, and equal, below it).
 */
const EXACT_SCAN_MAX = 4000;
const EXACT_SCAN_PER_K = 50;
/**
 * Beyond that bound the cheaper of the two plans: a filtered graph walk needs an ef of about
 * 100·total/matching (ann-hnsw-index.ts), an exact scan reads `matching` rows, and one unit of
 * ef cost about as much as nine scanned rows (300k rows: a 2 % filter took 308 ms walking, the
 * scan of its 6,000 rows ~35 ms). The costs meet at matching ≈ 30·√total.
 */
const EXACT_SCAN_SQRT_FACTOR = 30;
/** Filters passing at least this share of rows over-fetch instead of using the filter callback. */
const OVERFETCH_MIN_SHARE = 0.5;
const OVERFETCH_SLACK = 10;
const K_MAX = 10_000;
const PAGE_MAX = 10_000;

// SQLite result codes that mean the store cannot serve the call right now.
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|CORRUPT|NOTADB|READONLY|PROTOCOL|NOMEM)/;

const DRAWER_COLUMNS = 'd.seq AS seq, d.id AS id, d.content AS content, d.meta AS meta';
/** The logical drawer a row belongs to (the port's grouping key; indexed by schema v2). */
const LOGICAL_ID = 'coalesce(d.parent_drawer_id, d.parent_entry_id, d.id)';

const FILE_STATE_UPSERT = `INSERT INTO file_states (wing, source_file, size, mtime_ms, content_sha256, drawer_count, mined_at, extra)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (wing, source_file) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms,
    content_sha256 = excluded.content_sha256, drawer_count = excluded.drawer_count, mined_at = excluded.mined_at, extra = excluded.extra`;

interface Scored {
  seq: number;
  row: DrawerRow;
  distance: number;
}

function mapError(e: unknown): PalaceError {
  if (isPalaceError(e)) return e;
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && UNAVAILABLE.test(code)) return storeUnavailable('sqlite', e);
  const message = e instanceof Error ? e.message : String(e);
  return new PalaceError('internal', `sqlite drawer index: ${message}`, { store: 'sqlite', cause: e });
}

function byDistance(a: Scored, b: Scored): number {
  return a.distance - b.distance || (a.row.id < b.row.id ? -1 : a.row.id > b.row.id ? 1 : 0);
}

export class SqliteDrawerIndex implements DrawerIndex {
  readonly storeName = 'sqlite';
  private closed = false;

  private constructor(
    private readonly db: Database.Database,
    private readonly ann: DerivedAnnIndex,
    readonly dimension: number,
  ) {}

  /** Opens (creating if needed) the drawer index of `palaceDir`. */
  static open(palaceDir: string, opts: { dimension?: number } = {}): SqliteDrawerIndex {
    if (opts.dimension !== undefined) checkInt('dimension', opts.dimension, 1, 65_536);
    let db: Database.Database | undefined;
    try {
      mkdirSync(palaceDir, { recursive: true, mode: 0o700 });
      db = new Database(join(palaceDir, DRAWER_DB_FILE));
      prepareDrawerDatabase(db);
      const opened = db;
      const dimension = opened.transaction(() => {
        const stored = readMeta(opened, 'dimension');
        if (stored === undefined) {
          const d = opts.dimension ?? DEFAULT_DIMENSION;
          writeMeta(opened, 'dimension', d);
          return d;
        }
        if (opts.dimension !== undefined && Number(stored) !== opts.dimension) {
          throw invalidArgument('dimension', 'matches_palace', `the palace stores ${stored}-dimensional embeddings, not ${opts.dimension}`);
        }
        return Number(stored);
      }).immediate();
      const ann = DerivedAnnIndex.open(opened, join(palaceDir, DRAWER_ANN_FILE), dimension);
      return new SqliteDrawerIndex(opened, ann, dimension);
    } catch (e) {
      db?.close();
      throw mapError(e);
    }
  }

  /** How the ANN graph was obtained when this index opened, why it was rebuilt, and its labels now (a search catches it up). */
  get annStatus(): { outcome: 'loaded' | 'repaired' | 'rebuilt'; reason?: string | undefined; size: number } {
    return { outcome: this.ann.openOutcome, reason: this.ann.rebuildReason, size: this.ann.size };
  }

  private run<T>(fn: () => T): T {
    if (this.closed) throw new PalaceError('store_unavailable', 'the sqlite drawer index is closed', { store: 'sqlite', retryable: false });
    try {
      return fn();
    } catch (e) {
      throw mapError(e);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Writes

  private writeRows(drawers: readonly DrawerWrite[], generation: number): void {
    const upsertDrawer = this.db.prepare(`
      INSERT INTO drawers (id, content, meta, wing, room, source_file, parent_drawer_id, parent_entry_id, filed_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (id) DO UPDATE SET content = excluded.content, meta = excluded.meta, wing = excluded.wing,
        room = excluded.room, source_file = excluded.source_file, parent_drawer_id = excluded.parent_drawer_id,
        parent_entry_id = excluded.parent_entry_id, filed_at = excluded.filed_at
      RETURNING seq`).pluck();
    const upsertVector = this.db.prepare(
      'INSERT INTO drawer_embeddings (seq, vector, gen) VALUES (?, ?, ?) ON CONFLICT (seq) DO UPDATE SET vector = excluded.vector, gen = excluded.gen',
    );
    const deleteTokens = this.db.prepare('DELETE FROM drawer_fts WHERE rowid = ?');
    const insertTokens = this.db.prepare('INSERT INTO drawer_fts (rowid, tokens) VALUES (?, ?)');
    for (const d of drawers) {
      const m = d.meta;
      const seq = upsertDrawer.get(d.id, d.content, JSON.stringify(m), m.wing, m.room, m.source_file, m.parent_drawer_id ?? null, m.parent_entry_id ?? null, m.filed_at) as number;
      upsertVector.run(seq, encodeVector(d.embedding), generation);
      deleteTokens.run(seq);
      insertTokens.run(seq, lexicalText(d.content));
    }
  }

  /** Runs `write` in one immediate transaction stamped with a new generation; the graph follows in the background. */
  private transact(write: (generation: number) => number[]): number[] {
    const deleted = this.db.transaction(() => write(bumpGeneration(this.db))).immediate();
    this.ann.removeLabels(deleted);
    this.ann.catchUpSoon();
    return deleted;
  }

  async upsert(drawers: DrawerWrite[]): Promise<void> {
    this.run(() => {
      checkDrawerBatch('drawers', drawers, this.dimension);
      if (drawers.length === 0) return;
      this.transact((generation) => {
        this.writeRows(drawers, generation);
        return [];
      });
    });
  }

  async delete(ids: string[]): Promise<number> {
    return this.run(() => {
      checkStrings('ids', ids);
      if (ids.length === 0) return 0;
      return this.transact(() => this.db.prepare('DELETE FROM drawers WHERE id IN (SELECT value FROM json_each(?)) RETURNING seq').pluck().all(JSON.stringify(ids)) as number[]).length;
    });
  }

  async deleteWhere(filter: DrawerFilter): Promise<number> {
    return this.run(() => {
      if (filterIsEmpty(filter)) throw invalidArgument('filter', 'non_empty', 'deleteWhere needs at least one filter key; refusing to delete every drawer');
      const cond = filterCondition(filter);
      return this.transact(() => this.db.prepare(`DELETE FROM drawers AS d WHERE ${cond.sql} RETURNING seq`).pluck().all(...cond.params) as number[]).length;
    });
  }

  async replaceFile(wing: string, sourceFile: string, drawers: DrawerWrite[], state: FileState): Promise<void> {
    return this.replaceFiles(wing, [{ sourceFile, drawers, state }]);
  }

  async replaceFiles(wing: string, files: FileReplacement[]): Promise<void> {
    this.run(() => {
      checkFileReplacements(wing, files, this.dimension);
      if (files.length === 0) return;
      const deleteStale = this.db.prepare('DELETE FROM drawers WHERE wing = ? AND source_file = ? AND id NOT IN (SELECT value FROM json_each(?)) RETURNING seq').pluck();
      const putState = this.db.prepare(FILE_STATE_UPSERT);
      this.transact((generation) => {
        const stale: number[] = [];
        for (const { sourceFile, drawers, state } of files) {
          stale.push(...(deleteStale.all(wing, sourceFile, JSON.stringify(drawers.map((d) => d.id))) as number[]));
          this.writeRows(drawers, generation);
          putState.run(wing, sourceFile, state.size, state.mtime_ms, state.content_sha256, state.drawer_count, state.mined_at, state.extra === undefined ? null : JSON.stringify(state.extra));
        }
        return stale;
      });
    });
  }

  async replaceEmbeddings(vectors: Map<string, Float32Array>): Promise<number> {
    return this.run(() => {
      checkEmbeddingMap(vectors, this.dimension);
      if (vectors.size === 0) return 0;
      const update = this.db.prepare('UPDATE drawer_embeddings SET vector = ?, gen = ? WHERE seq = (SELECT seq FROM drawers WHERE id = ?)');
      let changed = 0;
      this.transact((generation) => {
        for (const [id, vector] of vectors) changed += update.run(encodeVector(vector), generation, id).changes;
        return [];
      });
      return changed;
    });
  }

  async readModel(): Promise<PalaceModelRecord | undefined> {
    return this.run(() => {
      const text = readMeta(this.db, MODEL_META_KEY);
      return text === undefined ? undefined : (JSON.parse(text) as PalaceModelRecord);
    });
  }

  async writeModel(next: PalaceModelRecord, expected: PalaceModelRecord | undefined): Promise<boolean> {
    return this.run(() => {
      const nextText = modelRecordText(next);
      const expectedText = expected === undefined ? undefined : modelRecordText(expected);
      return this.db.transaction(() => {
        if (readMeta(this.db, MODEL_META_KEY) !== expectedText) return false;
        writeMeta(this.db, MODEL_META_KEY, nextText);
        return true;
      }).immediate();
    });
  }

  // -------------------------------------------------------------------------------------------
  // Reads

  async get(ids: string[]): Promise<Drawer[]> {
    return this.run(() => {
      checkStrings('ids', ids);
      if (ids.length === 0) return [];
      const rows = this.db.prepare(`SELECT ${DRAWER_COLUMNS} FROM drawers d WHERE d.id IN (SELECT value FROM json_each(?))`).all(JSON.stringify(ids)) as DrawerRow[];
      const byId = new Map(rows.map((r) => [r.id, r]));
      return ids.flatMap((id) => {
        const row = byId.get(id);
        return row ? [rowToDrawer(row)] : [];
      });
    });
  }

  async embeddings(ids: string[]): Promise<Map<string, Float32Array>> {
    return this.run(() => {
      checkStrings('ids', ids);
      const out = new Map<string, Float32Array>();
      if (ids.length === 0) return out;
      const rows = this.db
        .prepare('SELECT d.id, e.vector FROM drawers d JOIN drawer_embeddings e ON e.seq = d.seq WHERE d.id IN (SELECT value FROM json_each(?))')
        .raw()
        .all(JSON.stringify(ids)) as [string, Buffer][];
      for (const [id, vector] of rows) out.set(id, decodeVector(vector));
      return out;
    });
  }

  async knn(vector: Float32Array, k: number, filter?: DrawerFilter): Promise<VectorHit[]> {
    return this.run(() => {
      if (!(vector instanceof Float32Array) || vector.length !== this.dimension) {
        throw invalidArgument('vector', 'dimension', `vector must be a Float32Array of ${this.dimension} numbers`);
      }
      checkInt('k', k, 1, K_MAX);
      const cond = filterCondition(filter);
      const matching = this.db.prepare(`SELECT count(*) FROM drawers d WHERE ${cond.sql}`).pluck().get(...cond.params) as number;
      if (matching === 0) return [];
      const total = filterIsEmpty(filter) ? matching : Math.max(this.ann.size, matching);
      const exactBound = Math.max(EXACT_SCAN_MAX, k * EXACT_SCAN_PER_K, Math.floor(EXACT_SCAN_SQRT_FACTOR * Math.sqrt(total)));
      const scored = matching <= exactBound ? this.exactNearest(vector, k, cond) : this.approximateNearest(vector, k, cond, filterIsEmpty(filter), matching);
      return scored.map((s) => ({ drawer: rowToDrawer(s.row), distance: s.distance }));
    });
  }

  /** Scans only (seq, vector) of the filter's rows, then reads the k winners in full. */
  private exactNearest(vector: Float32Array, k: number, cond: SqlCondition): Scored[] {
    const best: { seq: number; distance: number }[] = [];
    const rows = this.db
      .prepare(`SELECT e.seq, e.vector FROM drawers d JOIN drawer_embeddings e ON e.seq = d.seq WHERE ${cond.sql}`)
      .raw()
      .iterate(...cond.params) as IterableIterator<[number, Buffer]>;
    for (const [seq, blob] of rows) best.push({ seq, distance: cosineDistance(vector, decodeVector(blob)) });
    best.sort((a, b) => a.distance - b.distance);
    // Keep ties at the cut so the id tie-break below sees all of them.
    const cut = best.length > k ? best[k - 1]!.distance : Infinity;
    const winners = best.filter((b, i) => i < k || b.distance === cut);
    const distanceOf = new Map(winners.map((w) => [w.seq, w.distance]));
    const full = this.db
      .prepare(`SELECT ${DRAWER_COLUMNS} FROM json_each(?) AS j CROSS JOIN drawers d ON d.seq = j.value`)
      .all(JSON.stringify(winners.map((w) => w.seq))) as DrawerRow[];
    return full.map((row) => ({ seq: row.seq, row, distance: distanceOf.get(row.seq)! })).sort(byDistance).slice(0, k);
  }

  /**
   * Asks the graph for candidates, then re-reads them from SQLite with the filter applied again
   * and ranks them by exact distance. A filter passing most rows is applied by over-fetching;
   * a narrower one is handed to the library's filter callback so the graph walk skips other
   * rows. Widens the request until k rows survive or the graph has nothing more.
   */
  private approximateNearest(vector: Float32Array, k: number, cond: SqlCondition, unfiltered: boolean, matching: number): Scored[] {
    const total = Math.max(this.ann.size, matching);
    let allow: ((label: number) => boolean) | undefined;
    const useCallback = (): void => {
      const allowed = new Set(this.db.prepare(`SELECT d.seq FROM drawers d WHERE ${cond.sql}`).pluck().all(...cond.params) as number[]);
      allow = (label) => allowed.has(label);
    };
    let want = k;
    let overfetching = false;
    if (!unfiltered && matching < total * OVERFETCH_MIN_SHARE) useCallback();
    else if (!unfiltered) {
      want = Math.ceil((k * total) / matching) + OVERFETCH_SLACK;
      overfetching = true;
    }
    const verify = this.db.prepare(
      // CROSS JOIN keeps the candidate list as the outer loop, so SQLite looks rows up by seq
      // instead of walking a filter index over most of the table.
      `SELECT ${DRAWER_COLUMNS}, e.vector AS vector FROM json_each(?) AS j CROSS JOIN drawers d ON d.seq = j.value
       JOIN drawer_embeddings e ON e.seq = d.seq WHERE ${cond.sql}`,
    );
    for (;;) {
      const labels = this.ann.nearest(vector, want, allow, matching / total);
      const rows = verify.all(JSON.stringify(labels), ...cond.params) as (DrawerRow & { vector: Buffer })[];
      const scored = rows.map(({ vector: blob, ...row }) => ({ seq: row.seq, row, distance: cosineDistance(vector, decodeVector(blob)) }));
      if (scored.length >= k || labels.length < want || want >= total) return scored.sort(byDistance).slice(0, k);
      if (overfetching) {
        // The filter excludes the query's neighbourhood: walk the graph with the filter instead.
        overfetching = false;
        useCallback();
        want = k;
      } else {
        want *= 2;
      }
    }
  }

  async lexical(tokens: string[], k: number, filter?: DrawerFilter): Promise<Drawer[]> {
    return this.run(() => {
      checkStrings('tokens', tokens);
      checkInt('k', k, 1, K_MAX);
      const unique = [...new Set(tokens.filter((t) => t.trim() !== ''))];
      if (unique.length === 0) return [];
      const rows = this.db.prepare('SELECT count(*) FROM drawers').pluck().get() as number;
      const frequency = this.db.prepare(`SELECT doc FROM temp.${FTS_VOCABULARY} WHERE term = ?`).pluck();
      const documentFrequency = unique.map((t) => (frequency.get(asciiLower(t)) as number | undefined) ?? 0);
      const match = informativeTokenPositions(documentFrequency, rows)
        .map((i) => `"${unique[i]!.replaceAll('"', '""')}"`)
        .join(' OR ');
      const cond = filterCondition(filter);
      const found = this.db
        .prepare(
          `SELECT ${DRAWER_COLUMNS} FROM drawer_fts JOIN drawers d ON d.seq = drawer_fts.rowid
           WHERE drawer_fts MATCH ? AND ${cond.sql} ORDER BY bm25(drawer_fts), d.id LIMIT ?`,
        )
        .all(match, ...cond.params, k) as DrawerRow[];
      return found.map(rowToDrawer);
    });
  }

  async list(filter: DrawerFilter, offset: number, limit: number): Promise<DrawerPage> {
    return this.run(() => {
      checkInt('offset', offset, 0, Number.MAX_SAFE_INTEGER);
      checkInt('limit', limit, 0, PAGE_MAX);
      const cond = filterCondition(filter);
      const total = this.db.prepare(`SELECT count(DISTINCT ${LOGICAL_ID}) FROM drawers d WHERE ${cond.sql}`).pluck().get(...cond.params) as number;
      // Page over logical drawers; every row of a group on the page is returned, matched or not.
      const rows = this.db
        .prepare(
          `WITH page AS (SELECT ${LOGICAL_ID} AS lid FROM drawers d WHERE ${cond.sql} GROUP BY lid ORDER BY lid LIMIT ? OFFSET ?)
           SELECT ${DRAWER_COLUMNS} FROM page JOIN drawers d ON ${LOGICAL_ID} = page.lid
           ORDER BY page.lid, json_extract(d.meta, '$.chunk_index'), d.id`,
        )
        .all(...cond.params, limit, offset) as DrawerRow[];
      return { items: rows.map(rowToDrawer), total };
    });
  }

  async scanMetadata(filter: DrawerFilter, after: string | undefined, limit: number): Promise<DrawerMetadataRow[]> {
    return this.run(() => {
      checkInt('limit', limit, 1, PAGE_MAX);
      const cond = filterCondition(filter);
      const rows = this.db
        .prepare(`SELECT d.id AS id, d.meta AS meta FROM drawers d WHERE ${cond.sql} AND d.id > ? ORDER BY d.id LIMIT ?`)
        .all(...cond.params, after ?? '', limit) as { id: string; meta: string }[];
      return rows.map((r) => ({ id: r.id, meta: JSON.parse(r.meta) as DrawerMeta }));
    });
  }

  async count(filter?: DrawerFilter): Promise<number> {
    return this.run(() => {
      const cond = filterCondition(filter);
      return this.db.prepare(`SELECT count(*) FROM drawers d WHERE ${cond.sql}`).pluck().get(...cond.params) as number;
    });
  }

  async taxonomy(filter?: DrawerFilter): Promise<TaxonomyRow[]> {
    return this.run(() => {
      const cond = filterCondition(filter);
      return this.db
        .prepare(`SELECT d.wing AS wing, d.room AS room, count(*) AS count FROM drawers d WHERE ${cond.sql} GROUP BY d.wing, d.room ORDER BY d.wing, d.room`)
        .all(...cond.params) as TaxonomyRow[];
    });
  }

  async sources(filter: DrawerFilter, after: string | undefined, limit: number): Promise<{ items: SourceRow[]; next?: string }> {
    return this.run(() => {
      checkInt('limit', limit, 1, PAGE_MAX);
      const cond = filterCondition(filter);
      const [afterWing, afterSource] = after === undefined ? [undefined, undefined] : decodeCursor('after', after);
      const resume = afterWing === undefined ? '' : 'AND (d.wing, d.source_file) > (?, ?)';
      const resumeParams = afterWing === undefined ? [] : [afterWing, afterSource!];
      const rows = this.db
        .prepare(
          `SELECT d.wing AS wing, d.source_file AS source_file, count(*) AS drawers FROM drawers d
           WHERE ${cond.sql} ${resume} GROUP BY d.wing, d.source_file ORDER BY d.wing, d.source_file LIMIT ?`,
        )
        .all(...cond.params, ...resumeParams, limit + 1) as SourceRow[];
      return page(rows, limit, (r) => encodeCursor(r.wing, r.source_file));
    });
  }

  // -------------------------------------------------------------------------------------------
  // File states

  async fileStates(wing: string, sourceFiles: string[]): Promise<Map<string, FileState>> {
    return this.run(() => {
      checkNonEmpty('wing', wing);
      checkStrings('sourceFiles', sourceFiles);
      const rows = this.db
        .prepare('SELECT * FROM file_states WHERE wing = ? AND source_file IN (SELECT value FROM json_each(?))')
        .all(wing, JSON.stringify(sourceFiles)) as FileStateRow[];
      return new Map(rows.map((r) => [r.source_file, rowToFileState(r)]));
    });
  }

  async listFileStates(wing: string | undefined, after: string | undefined, limit: number): Promise<{ items: FileState[]; next?: string }> {
    return this.run(() => {
      if (wing !== undefined) checkNonEmpty('wing', wing);
      checkInt('limit', limit, 1, PAGE_MAX);
      const where: string[] = [];
      const params: string[] = [];
      if (wing !== undefined) {
        where.push('wing = ?');
        params.push(wing);
      }
      if (after !== undefined) {
        where.push('(wing, source_file) > (?, ?)');
        params.push(...decodeCursor('after', after));
      }
      const rows = this.db
        .prepare(`SELECT * FROM file_states ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY wing, source_file LIMIT ?`)
        .all(...params, limit + 1) as FileStateRow[];
      return page(rows.map(rowToFileState), limit, (s) => encodeCursor(s.wing, s.source_file));
    });
  }

  async deleteFileStates(wing: string, sourceFiles: string[]): Promise<number> {
    return this.run(() => {
      checkNonEmpty('wing', wing);
      checkStrings('sourceFiles', sourceFiles);
      return this.db.prepare('DELETE FROM file_states WHERE wing = ? AND source_file IN (SELECT value FROM json_each(?))').run(wing, JSON.stringify(sourceFiles)).changes;
    });
  }

  async scanRows(after: string | undefined, limit: number): Promise<DrawerWrite[]> {
    return this.run(() => {
      checkInt('limit', limit, 1, PAGE_MAX);
      const rows = this.db
        .prepare(`SELECT ${DRAWER_COLUMNS}, e.vector AS vector FROM drawers d JOIN drawer_embeddings e ON e.seq = d.seq
          WHERE d.id > ? ORDER BY d.id LIMIT ?`)
        .all(after ?? '', limit) as (DrawerRow & { vector: Buffer })[];
      return rows.map(({ vector, ...row }) => ({ ...rowToDrawer(row), embedding: decodeVector(vector) }));
    });
  }

  async putFileStates(states: FileState[]): Promise<void> {
    this.run(() => {
      for (const s of states) checkFileState(s);
      const put = this.db.prepare(FILE_STATE_UPSERT);
      this.db.transaction(() => {
        for (const s of states) put.run(s.wing, s.source_file, s.size, s.mtime_ms, s.content_sha256, s.drawer_count, s.mined_at, s.extra === undefined ? null : JSON.stringify(s.extra));
      }).immediate();
    });
  }

  /** Repair: rewrites every FTS row from the drawers' text and rebuilds the ANN graph from SQLite. */
  rebuildDerived(): { fts_rows: number; ann_labels: number } {
    return this.run(() => {
      const page = this.db.prepare('SELECT seq, content FROM drawers WHERE seq > ? ORDER BY seq LIMIT 1000').raw();
      const insert = this.db.prepare('INSERT INTO drawer_fts (rowid, tokens) VALUES (?, ?)');
      const ftsRows = this.db.transaction(() => {
        this.db.prepare("INSERT INTO drawer_fts (drawer_fts) VALUES ('delete-all')").run();
        let n = 0;
        for (let after = 0; ;) {
          const rows = page.all(after) as [number, string][];
          for (const [seq, content] of rows) insert.run(seq, lexicalText(content));
          n += rows.length;
          if (rows.length < 1000) return n;
          after = rows[rows.length - 1]![0];
        }
      }).immediate();
      return { fts_rows: ftsRows, ann_labels: this.ann.rebuildNow() };
    });
  }

  /** Persists the ANN graph and closes the database. Closing twice is harmless. */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      // A clean close leaves a file that reflects every write, so the next open just loads it.
      this.ann.catchUp();
      this.ann.persist();
    } finally {
      this.closed = true;
      this.db.close();
    }
  }
}

interface FileStateRow {
  wing: string;
  source_file: string;
  size: number;
  mtime_ms: number;
  content_sha256: string;
  drawer_count: number;
  mined_at: string;
  extra: string | null;
}

function rowToFileState(r: FileStateRow): FileState {
  const state: FileState = {
    wing: r.wing,
    source_file: r.source_file,
    size: r.size,
    mtime_ms: r.mtime_ms,
    content_sha256: r.content_sha256,
    drawer_count: r.drawer_count,
    mined_at: r.mined_at,
  };
  if (r.extra !== null) state.extra = JSON.parse(r.extra) as FileState['extra'];
  return state;
}

/** The first `limit` of `rows` (which holds up to limit + 1), with a cursor when more follow. */
function page<T>(rows: T[], limit: number, cursorOf: (row: T) => string): { items: T[]; next?: string } {
  if (rows.length <= limit) return { items: rows };
  const items = rows.slice(0, limit);
  return { items, next: cursorOf(items[items.length - 1]!) };
}

/** The factory the composition root (stores/embedded/open.ts) calls. */
export async function openSqliteDrawerIndex(palaceDir: string, opts?: { dimension?: number }): Promise<SqliteDrawerIndex> {
  return SqliteDrawerIndex.open(palaceDir, opts);
}
