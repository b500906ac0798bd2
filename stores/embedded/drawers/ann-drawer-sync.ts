/**
 * The ANN index of a drawer database: derived from `drawer_embeddings`, never trusted over it.
 *
 * Every write transaction bumps the database's `generation` and stamps the rows it wrote with
 * it. The persisted graph records the generation it reflects and its SHA-256 in `palace_meta`.
 * On open a missing or mismatching file is rebuilt from SQLite; a file that loads is reconciled
 * (labels SQLite no longer has are marked deleted, rows newer than the file are re-added). At run
 * time the same catch-up applies writes made by this or any other process before each search,
 * and after each write of this process in slices between macrotasks: one insert costs about
 * 0.6 ms, so a whole mined file of 15,000 drawers would otherwise hold the event loop for 9 s
 * (a worker's heartbeats and lease renewals with it).
 */
import { existsSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { HnswGraph, fileSha256 } from './ann-hnsw-index.js';
import { readMeta, writeMeta } from './schema.js';
import { decodeVector } from './rows.js';

const GENERATION = 'generation';
const FILE_GENERATION = 'ann_file_generation';
const FILE_SHA256 = 'ann_file_sha256';
/** The palace's vector length (drawer-db.ts writes it). */
const DIMENSION = 'dimension';
/** Persist after this many changes, or a fifth of the index, whichever is larger. */
const PERSIST_MIN_CHANGES = 5000;
/** Rebuild on open when deleted slots exceed the live ones (and this many). */
const COMPACT_MIN_WASTE = 10_000;
/** Rows one background catch-up slice puts into the graph (about 0.15 s). */
const CATCH_UP_SLICE = 256;

export type AnnOpenOutcome = 'loaded' | 'repaired' | 'rebuilt';

/** The generation of the last write transaction. */
export function currentGeneration(db: Database.Database): number {
  return Number(readMeta(db, GENERATION) ?? 0);
}

/** Starts a write: the next generation, to stamp on every embedding the transaction writes. */
export function bumpGeneration(db: Database.Database): number {
  const next = currentGeneration(db) + 1;
  writeMeta(db, GENERATION, next);
  return next;
}

export class DerivedAnnIndex {
  private changesSincePersist = 0;
  private persistedGeneration: number;
  /** The last row a slice put past `generation` (rows are taken in (gen, seq) order). */
  private cursor: { gen: number; seq: number } | undefined;
  private slice: NodeJS.Immediate | undefined;

  private constructor(
    private readonly db: Database.Database,
    private readonly path: string,
    private graph: HnswGraph,
    /** The database generation the in-memory graph reflects. */
    private generation: number,
    /** How the graph was obtained on open (for status and tests). */
    readonly openOutcome: AnnOpenOutcome,
    /** Why it was rebuilt, when it was. */
    readonly rebuildReason: string | undefined,
  ) {
    this.persistedGeneration = Number(readMeta(db, FILE_GENERATION) ?? -1);
  }

  static open(db: Database.Database, path: string, dimension: number): DerivedAnnIndex {
    const recordedSha = readMeta(db, FILE_SHA256);
    const fileGeneration = Number(readMeta(db, FILE_GENERATION) ?? -1);
    let reason: string;
    if (!existsSync(path)) reason = 'missing';
    else if (recordedSha === undefined || fileSha256(path) !== recordedSha) reason = 'checksum mismatch';
    else {
      try {
        return DerivedAnnIndex.reconcile(db, path, dimension, fileGeneration);
      } catch (e) {
        reason = `unreadable: ${e instanceof Error ? e.message : String(e)}`;
      }
    }
    return DerivedAnnIndex.rebuild(db, path, dimension, reason);
  }

  private static reconcile(db: Database.Database, path: string, dimension: number, fileGeneration: number): DerivedAnnIndex {
    return db.transaction(() => {
      const generation = Number(readMeta(db, GENERATION) ?? 0);
      const rows = db.prepare('SELECT seq, gen FROM drawer_embeddings').raw().all() as [number, number][];
      const gens = new Map(rows);
      const graph = HnswGraph.load(dimension, path, (label) => gens.has(label));
      if (graph.slots - graph.live.size > Math.max(COMPACT_MIN_WASTE, graph.live.size)) {
        throw new Error('too many deleted slots, compacting');
      }
      const stale = rows.filter(([seq, gen]) => gen > fileGeneration || !graph.live.has(seq)).map(([seq]) => seq);
      putRows(db, graph, stale);
      const index = new DerivedAnnIndex(db, path, graph, generation, stale.length === 0 && generation === fileGeneration ? 'loaded' : 'repaired', undefined);
      index.changesSincePersist = stale.length;
      return index;
    })();
  }

  /** A graph of every stored embedding, and the database generation it reflects. */
  private static build(db: Database.Database, dimension: number): { graph: HnswGraph; generation: number } {
    return db.transaction(() => {
      const generation = Number(readMeta(db, GENERATION) ?? 0);
      const count = (db.prepare('SELECT count(*) FROM drawer_embeddings').pluck().get() as number) ?? 0;
      const graph = HnswGraph.empty(dimension, count);
      for (const row of db.prepare('SELECT seq, vector FROM drawer_embeddings').raw().iterate() as IterableIterator<[number, Buffer]>) {
        graph.put(row[0], decodeVector(row[1]));
      }
      return { graph, generation };
    })();
  }

  private static rebuild(db: Database.Database, path: string, dimension: number, reason: string): DerivedAnnIndex {
    const { graph, generation } = DerivedAnnIndex.build(db, dimension);
    const index = new DerivedAnnIndex(db, path, graph, generation, 'rebuilt', reason);
    index.persist();
    return index;
  }

  /** Repair: replaces the graph with one built afresh from SQLite and persists it. */
  rebuildNow(): number {
    return this.rebuildAt(this.graph.dimension);
  }

  private rebuildAt(dimension: number): number {
    this.stopSlices();
    const { graph, generation } = DerivedAnnIndex.build(this.db, dimension);
    this.graph = graph;
    this.generation = generation;
    this.cursor = undefined;
    this.changesSincePersist = graph.live.size + 1;
    this.persist();
    return graph.live.size;
  }

  /** Length of the vectors in the graph: the palace's stored `dimension`, as of the last catch-up. */
  get dimension(): number {
    return this.graph.dimension;
  }

  /**
   * Starts a graph of the stored length afresh when the palace's `dimension` changed since it was
   * built (a re-embed to an encoder set of another length, in this or another process).
   */
  followStoredDimension(): void {
    const stored = Number(readMeta(this.db, DIMENSION) ?? this.graph.dimension);
    if (stored !== this.graph.dimension) this.rebuildAt(stored);
  }

  /** Live labels in the graph. */
  get size(): number {
    return this.graph.live.size;
  }

  /** Applies every committed write the graph has not seen yet (from any process). */
  catchUp(): void {
    this.stopSlices();
    this.applyRows(-1);
  }

  /** Catches up in slices of CATCH_UP_SLICE rows, one per macrotask, then persists if due. */
  catchUpSoon(): void {
    if (this.slice !== undefined) return;
    const next = (): void => {
      this.slice = undefined;
      try {
        if (this.applyRows(CATCH_UP_SLICE)) this.persistIfDirty();
        else this.slice = setImmediate(next);
      } catch {
        // Nothing waits on this callback: the next search (catch-up) or close (persist) meets the error again and reports it.
      }
    };
    this.slice = setImmediate(next);
  }

  private stopSlices(): void {
    if (this.slice !== undefined) clearImmediate(this.slice);
    this.slice = undefined;
  }

  /** Puts up to `limit` unseen rows (-1: all) into the graph; true once the graph is current. */
  private applyRows(limit: number): boolean {
    return this.db.transaction(() => {
      const current = Number(readMeta(this.db, GENERATION) ?? 0);
      if (current === this.generation) return true;
      if (Number(readMeta(this.db, DIMENSION) ?? this.graph.dimension) !== this.graph.dimension) {
        this.followStoredDimension();
        return true;
      }
      const from = this.cursor ?? { gen: this.generation, seq: Number.MAX_SAFE_INTEGER };
      const fresh = this.db
        // A row value, so SQLite seeks the gen index to the cursor instead of scanning it from the start.
        .prepare('SELECT seq, vector, gen FROM drawer_embeddings WHERE (gen, seq) > (?, ?) ORDER BY gen, seq LIMIT ?')
        .raw()
        .all(from.gen, from.seq, limit) as [number, Buffer, number][];
      for (const [seq, vector] of fresh) this.graph.put(seq, decodeVector(vector));
      this.changesSincePersist += fresh.length;
      if (limit >= 0 && fresh.length === limit) {
        const [seq, , gen] = fresh[fresh.length - 1]!;
        this.cursor = { gen, seq };
        return false;
      }
      const count = this.db.prepare('SELECT count(*) FROM drawer_embeddings').pluck().get() as number;
      // Deletions leave no row behind; another process's deletes show up as a count mismatch.
      if (count !== this.graph.live.size) {
        const seqs = new Set(this.db.prepare('SELECT seq FROM drawer_embeddings').pluck().all() as number[]);
        for (const label of [...this.graph.live]) if (!seqs.has(label)) this.remove(label);
        putRows(this.db, this.graph, [...seqs].filter((s) => !this.graph.live.has(s)));
      }
      this.generation = current;
      this.cursor = undefined;
      return true;
    })();
  }

  /** Drops labels whose rows this process has just deleted. */
  removeLabels(labels: readonly number[]): void {
    for (const label of labels) this.remove(label);
  }

  private remove(label: number): void {
    if (!this.graph.live.has(label)) return;
    this.graph.remove(label);
    this.changesSincePersist++;
  }

  /** Nearest live labels, after catching up with the database. */
  nearest(vector: Float32Array, k: number, allow?: (label: number) => boolean, share?: number): number[] {
    this.catchUp();
    return this.graph.search(vector, k, allow, share);
  }

  /** Persists once enough has changed that a crash would make reopening slow. */
  persistIfDirty(): void {
    if (this.changesSincePersist >= Math.max(PERSIST_MIN_CHANGES, this.graph.live.size / 5)) this.persist();
  }

  /** Writes the graph and records which generation it reflects. */
  persist(): void {
    if (this.changesSincePersist === 0 && this.persistedGeneration === this.generation && existsSync(this.path)) return;
    const sha = this.graph.persist(this.path);
    this.db.transaction(() => {
      writeMeta(this.db, FILE_GENERATION, this.generation);
      writeMeta(this.db, FILE_SHA256, sha);
    })();
    this.persistedGeneration = this.generation;
    this.changesSincePersist = 0;
  }
}

function putRows(db: Database.Database, graph: HnswGraph, seqs: readonly number[]): void {
  const one = db.prepare('SELECT vector FROM drawer_embeddings WHERE seq = ?').pluck();
  for (const seq of seqs) {
    const blob = one.get(seq) as Buffer | undefined;
    if (blob) graph.put(seq, decodeVector(blob));
  }
}
