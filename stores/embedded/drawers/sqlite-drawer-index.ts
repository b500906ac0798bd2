/**
 * The embedded profile's drawer store: the drawers and their searches (this file), with mining's
 * file states (file-states.ts), the model record (model-record.ts) and bulk rows (drawer-bulk.ts)
 * over the one database of drawer-db.ts. Distances are always recomputed from the stored
 * embeddings, so they are exact whichever path found a row.
 */
import type { Drawer, DrawerMeta, DrawerWrite } from '../../../core/drawer.js';
import { SQLITE_STORE } from '../sqlite-open.js';
import { invalidArgument } from '../../../core/errors.js';
import { cosineDistance } from '../../../core/vector.js';
import { decodeCursor, encodeCursor, pageWithCursor } from '../../shared/drawers/cursor.js';
import type { CandidatePool, DrawerFilter, DrawerIndex, DrawerMetadataRow, DrawerPage, PoolRequest, SourceRow, TaxonomyRow,
  VectorHit } from '../../ports/drawers/drawer-index.js';
import { poolOfParts } from '../../shared/drawers/pool-of-parts.js';
import { ComposedDrawerStore } from '../../shared/drawers/composed-drawer-store.js';
import { exactScanBound } from '../../shared/drawers/exact-scan.js';
import { checkDrawerBatch, checkInt, checkStrings } from '../../shared/drawers/port-args.js';
import { SqliteDrawerBulk } from './drawer-bulk.js';
import { PAGE_MAX, SqliteDrawerDb } from './drawer-db.js';
import { SqliteFileStates } from './file-states.js';
import { filterCondition } from './filter-sql.js';
import { lexicalSeqs } from './fts-lexical.js';
import { FtsStatistics } from './fts-statistics.js';
import { filterIsEmpty } from '../../shared/drawers/filter-rules.js';
import type { SqlCondition } from './filter-sql.js';
import { SqliteModelRecord } from './model-record.js';
import { DRAWER_COLUMNS, decodeVector, rowToDrawer } from './rows.js';
import type { DrawerRow } from './rows.js';

/**
 * Beyond the exact-scan bound both profiles share (exact-scan.ts), the cheaper of the two plans:
 * a filtered graph walk needs an ef of about 100·total/matching (ann-hnsw-index.ts), an exact
 * scan reads `matching` rows, and one unit of ef cost about as much as nine scanned rows (300k rows: a 2 % filter took 308 ms walking, the
 * scan of its 6,000 rows ~35 ms). The costs meet at matching ≈ 30·√total.
 */
const EXACT_SCAN_SQRT_FACTOR = 30;
/** Filters passing at least this share of rows over-fetch instead of using the filter callback. */
const OVERFETCH_MIN_SHARE = 0.5;
const OVERFETCH_SLACK = 10;
const K_MAX = 10_000;

/** The logical drawer a row belongs to (the port's grouping key; indexed by schema v2). */
const LOGICAL_ID = 'coalesce(d.parent_drawer_id, d.parent_entry_id, d.id)';

interface Scored {
  seq: number;
  row: DrawerRow;
  distance: number;
}

function byDistance(a: Scored, b: Scored): number {
  return a.distance - b.distance || (a.row.id < b.row.id ? -1 : a.row.id > b.row.id ? 1 : 0);
}

export class SqliteDrawerIndex extends ComposedDrawerStore implements DrawerIndex {
  readonly storeName = SQLITE_STORE;

  private readonly statistics: FtsStatistics;

  private constructor(private readonly base: SqliteDrawerDb) {
    super(new SqliteFileStates(base), new SqliteModelRecord(base), new SqliteDrawerBulk(base));
    this.statistics = new FtsStatistics(base.db);
  }

  /** Opens (creating if needed) the drawer store of `palaceDir`. */
  static open(palaceDir: string, opts: { dimension?: number } = {}): SqliteDrawerIndex {
    return new SqliteDrawerIndex(SqliteDrawerDb.open(palaceDir, opts));
  }

  get dimension(): number {
    return this.base.dimension;
  }

  /** How the ANN graph was obtained when this store opened, why it was rebuilt, and its labels now (a search catches it up). */
  get annStatus(): SqliteDrawerDb['annStatus'] {
    return this.base.annStatus;
  }

  async upsert(drawers: DrawerWrite[]): Promise<void> {
    this.base.run(() => {
      checkDrawerBatch('drawers', drawers, this.base.dimension);
      if (drawers.length === 0) return;
      this.base.transact((generation) => {
        this.base.writeRows(drawers, generation);
        return [];
      });
    });
  }

  async delete(ids: string[]): Promise<number> {
    return this.base.run(() => {
      checkStrings('ids', ids);
      if (ids.length === 0) return 0;
      return this.base.transact(() =>
        this.base.db.prepare('DELETE FROM drawers WHERE id IN (SELECT value FROM json_each(?)) RETURNING seq').pluck().all(JSON.stringify(ids)) as number[]
      ).length;
    });
  }

  async deleteWhere(filter: DrawerFilter): Promise<number> {
    return this.base.run(() => {
      if (filterIsEmpty(filter)) throw invalidArgument('filter', 'non_empty', 'deleteWhere needs at least one filter key; refusing to delete every drawer');
      const cond = filterCondition(filter);
      return this.base.transact(() => this.base.db.prepare(`DELETE FROM drawers AS d WHERE ${cond.sql} RETURNING seq`).pluck().all(...cond.params) as number[])
        .length;
    });
  }

  // -------------------------------------------------------------------------------------------
  // Reads

  async get(ids: string[]): Promise<Drawer[]> {
    return this.base.run(() => {
      checkStrings('ids', ids);
      if (ids.length === 0) return [];
      const rows = this.base.db.prepare(`SELECT ${DRAWER_COLUMNS} FROM drawers d WHERE d.id IN (SELECT value FROM json_each(?))`).all(
        JSON.stringify(ids),
      ) as DrawerRow[];
      const byId = new Map(rows.map((r) => [r.id, r]));
      return ids.flatMap((id) => {
        const row = byId.get(id);
        return row ? [rowToDrawer(row)] : [];
      });
    });
  }

  async embeddings(ids: string[]): Promise<Map<string, Float32Array>> {
    return this.base.run(() => {
      checkStrings('ids', ids);
      const out = new Map<string, Float32Array>();
      if (ids.length === 0) return out;
      const rows = this.base.db
        .prepare('SELECT d.id, e.vector FROM drawers d JOIN drawer_embeddings e ON e.seq = d.seq WHERE d.id IN (SELECT value FROM json_each(?))')
        .raw()
        .all(JSON.stringify(ids)) as [string, Buffer][];
      for (const [id, vector] of rows) out.set(id, decodeVector(vector));
      return out;
    });
  }

  async knn(vector: Float32Array, k: number, filter?: DrawerFilter): Promise<VectorHit[]> {
    return this.base.run(() => {
      if (!(vector instanceof Float32Array) || vector.length !== this.base.dimension) {
        throw invalidArgument('vector', 'dimension', `vector must be a Float32Array of ${this.base.dimension} numbers`);
      }
      checkInt('k', k, 1, K_MAX);
      const cond = filterCondition(filter);
      const matching = filterIsEmpty(filter)
        ? this.statistics.rows()
        : this.base.db.prepare(`SELECT count(*) FROM drawers d WHERE ${cond.sql}`).pluck().get(...cond.params) as number;
      if (matching === 0) return [];
      const total = filterIsEmpty(filter) ? matching : Math.max(this.base.ann.size, matching);
      const exactBound = Math.max(exactScanBound(k), Math.floor(EXACT_SCAN_SQRT_FACTOR * Math.sqrt(total)));
      const scored = matching <= exactBound ? this.exactNearest(vector, k, cond) : this.approximateNearest(vector, k, cond, filterIsEmpty(filter), matching);
      return scored.map((s) => ({ drawer: rowToDrawer(s.row), distance: s.distance }));
    });
  }

  /** Scans only (seq, vector) of the filter's rows, then reads the k winners in full. */
  private exactNearest(vector: Float32Array, k: number, cond: SqlCondition): Scored[] {
    const best: { seq: number; distance: number }[] = [];
    const rows = this.base.db
      .prepare(`SELECT e.seq, e.vector FROM drawers d JOIN drawer_embeddings e ON e.seq = d.seq WHERE ${cond.sql}`)
      .raw()
      .iterate(...cond.params) as IterableIterator<[number, Buffer]>;
    for (const [seq, blob] of rows) best.push({ seq, distance: cosineDistance(vector, decodeVector(blob)) });
    best.sort((a, b) => a.distance - b.distance);
    // Keep ties at the cut so the id tie-break below sees all of them.
    const cut = best.length > k ? best[k - 1]!.distance : Infinity;
    const winners = best.filter((b, i) => i < k || b.distance === cut);
    const distanceOf = new Map(winners.map((w) => [w.seq, w.distance]));
    const full = this.base.db
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
    const total = Math.max(this.base.ann.size, matching);
    let allow: ((label: number) => boolean) | undefined;
    const useCallback = (): void => {
      const allowed = new Set(this.base.db.prepare(`SELECT d.seq FROM drawers d WHERE ${cond.sql}`).pluck().all(...cond.params) as number[]);
      allow = (label) => allowed.has(label);
    };
    let want = k;
    let overfetching = false;
    if (!unfiltered && matching < total * OVERFETCH_MIN_SHARE) useCallback();
    else if (!unfiltered) {
      want = Math.ceil((k * total) / matching) + OVERFETCH_SLACK;
      overfetching = true;
    }
    const verify = this.base.db.prepare(
      // CROSS JOIN keeps the candidate list as the outer loop, so SQLite looks rows up by seq
      // instead of walking a filter index over most of the table.
      `SELECT ${DRAWER_COLUMNS}, e.vector AS vector FROM json_each(?) AS j CROSS JOIN drawers d ON d.seq = j.value
       JOIN drawer_embeddings e ON e.seq = d.seq WHERE ${cond.sql}`,
    );
    for (;;) {
      const labels = this.base.ann.nearest(vector, want, allow, matching / total);
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
    return this.base.run(() => {
      checkStrings('tokens', tokens);
      checkInt('k', k, 1, K_MAX);
      const unique = [...new Set(tokens.filter((t) => t.trim() !== ''))];
      if (unique.length === 0) return [];
      const winners = lexicalSeqs(this.base.db, this.statistics, unique, k, filter);
      const found = this.base.db
        .prepare(`SELECT ${DRAWER_COLUMNS} FROM json_each(?) AS j CROSS JOIN drawers d ON d.seq = j.value ORDER BY j.key`)
        .all(JSON.stringify(winners)) as DrawerRow[];
      return found.map(rowToDrawer);
    });
  }

  /** The separate searches one after the other: each is a local query, so nothing is gained by merging them. */
  candidatePool(request: PoolRequest): Promise<CandidatePool> {
    return poolOfParts(this, request);
  }

  async list(filter: DrawerFilter, offset: number, limit: number): Promise<DrawerPage> {
    return this.base.run(() => {
      checkInt('offset', offset, 0, Number.MAX_SAFE_INTEGER);
      checkInt('limit', limit, 0, PAGE_MAX);
      const cond = filterCondition(filter);
      const total = this.base.db.prepare(`SELECT count(DISTINCT ${LOGICAL_ID}) FROM drawers d WHERE ${cond.sql}`).pluck().get(...cond.params) as number;
      // Page over logical drawers; every row of a group on the page is returned, matched or not.
      const rows = this.base.db
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
    return this.base.run(() => {
      checkInt('limit', limit, 1, PAGE_MAX);
      const cond = filterCondition(filter);
      const rows = this.base.db
        .prepare(`SELECT d.id AS id, d.meta AS meta FROM drawers d WHERE ${cond.sql} AND d.id > ? ORDER BY d.id LIMIT ?`)
        .all(...cond.params, after ?? '', limit) as { id: string; meta: string }[];
      return rows.map((r) => ({ id: r.id, meta: JSON.parse(r.meta) as DrawerMeta }));
    });
  }

  async count(filter?: DrawerFilter): Promise<number> {
    return this.base.run(() => {
      const cond = filterCondition(filter);
      return this.base.db.prepare(`SELECT count(*) FROM drawers d WHERE ${cond.sql}`).pluck().get(...cond.params) as number;
    });
  }

  async taxonomy(filter?: DrawerFilter): Promise<TaxonomyRow[]> {
    return this.base.run(() => {
      const cond = filterCondition(filter);
      return this.base.db
        .prepare(`SELECT d.wing AS wing, d.room AS room, count(*) AS count FROM drawers d WHERE ${cond.sql} GROUP BY d.wing, d.room ORDER BY d.wing, d.room`)
        .all(...cond.params) as TaxonomyRow[];
    });
  }

  async sources(filter: DrawerFilter, after: string | undefined, limit: number): Promise<{ items: SourceRow[]; next?: string }> {
    return this.base.run(() => {
      checkInt('limit', limit, 1, PAGE_MAX);
      const cond = filterCondition(filter);
      const [afterWing, afterSource] = after === undefined ? [undefined, undefined] : decodeCursor('after', after);
      const resume = afterWing === undefined ? '' : 'AND (d.wing, d.source_file) > (?, ?)';
      const resumeParams = afterWing === undefined ? [] : [afterWing, afterSource!];
      const rows = this.base.db
        .prepare(
          `SELECT d.wing AS wing, d.source_file AS source_file, count(*) AS drawers FROM drawers d
           WHERE ${cond.sql} ${resume} GROUP BY d.wing, d.source_file ORDER BY d.wing, d.source_file LIMIT ?`,
        )
        .all(...cond.params, ...resumeParams, limit + 1) as SourceRow[];
      return pageWithCursor(rows, limit, (r) => encodeCursor(r.wing, r.source_file));
    });
  }

  /** Repair: rewrites every FTS row from the drawers' text and rebuilds the ANN graph from SQLite. */
  rebuildDerived(): { fts_rows: number; ann_labels: number } {
    const rebuilt = this.base.rebuildDerived();
    this.statistics.forget();
    return rebuilt;
  }

  /** Persists the ANN graph and closes the database. Closing twice is harmless. */
  close(): Promise<void> {
    return this.base.close();
  }
}

/** The factory the composition root (stores/open.ts) calls. */
export async function openSqliteDrawerIndex(palaceDir: string, opts?: { dimension?: number }): Promise<SqliteDrawerIndex> {
  return SqliteDrawerIndex.open(palaceDir, opts);
}
