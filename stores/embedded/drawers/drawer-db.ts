/**
 * The embedded drawer store's database: SQLite (`<palace>/drawers.sqlite3`) is the system of
 * record for drawers, embeddings, the FTS5 lexical index, file states and the model record; an
 * HNSW graph next to it (`drawers.hnsw`) is derived from it and only narrows vector searches.
 * Every write is one SQLite transaction stamped with a generation; the graph follows after
 * commit (see ann-drawer-sync.ts). The ports' adapters in this folder share it.
 */
import { mkdirSync } from 'node:fs';
import { SQLITE_STORE } from '../sqlite-open.js';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { DrawerWrite } from '../../../core/drawer.js';
import { PalaceError, invalidArgument, isPalaceError, storeUnavailable } from '../../../core/errors.js';
import { lexicalText } from '../../../core/lexical.js';
import { checkInt } from '../../shared/drawers/port-args.js';
import { DerivedAnnIndex, bumpGeneration } from './ann-drawer-sync.js';
import { encodeVector } from './rows.js';
import { prepareDrawerDatabase, readMeta, writeMeta } from './schema.js';

export const DRAWER_DB_FILE = 'drawers.sqlite3';
export const DRAWER_ANN_FILE = 'drawers.hnsw';
export const DEFAULT_DIMENSION = 384;
/** The largest page any listing of the drawer store returns. */
export const PAGE_MAX = 10_000;

// SQLite result codes that mean the store cannot serve the call right now.
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|CORRUPT|NOTADB|READONLY|PROTOCOL|NOMEM)/;

function mapError(e: unknown): PalaceError {
  if (isPalaceError(e)) return e;
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && UNAVAILABLE.test(code)) return storeUnavailable(SQLITE_STORE, e);
  const message = e instanceof Error ? e.message : String(e);
  return new PalaceError('internal', `sqlite drawer index: ${message}`, { store: SQLITE_STORE, cause: e });
}

export class SqliteDrawerDb {
  private closed = false;

  private constructor(
    readonly db: Database.Database,
    readonly ann: DerivedAnnIndex,
  ) {}

  /** Length of the vectors the palace takes (its `dimension` meta value, followed by the graph). */
  get dimension(): number {
    return this.ann.dimension;
  }

  /**
   * Makes the palace take `dimension`-d vectors (DrawerBulk.resetEmbeddings): when it took
   * another length, drops every stored vector in one transaction and starts the graph afresh.
   */
  resetDimension(dimension: number): void {
    checkInt('dimension', dimension, 1, 65_536);
    this.db.transaction(() => {
      if (Number(readMeta(this.db, 'dimension') ?? DEFAULT_DIMENSION) === dimension) return;
      this.db.prepare('DELETE FROM drawer_embeddings').run();
      writeMeta(this.db, 'dimension', dimension);
      bumpGeneration(this.db);
    }).immediate();
    this.ann.followStoredDimension();
  }

  /** Opens (creating if needed) the drawer database of `palaceDir` and its ANN graph. */
  static open(palaceDir: string, opts: { dimension?: number } = {}): SqliteDrawerDb {
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
      return new SqliteDrawerDb(opened, ann);
    } catch (e) {
      db?.close();
      throw mapError(e);
    }
  }

  /** How the ANN graph was obtained when this index opened, why it was rebuilt, and its labels now (a search catches it up). */
  get annStatus(): { outcome: 'loaded' | 'repaired' | 'rebuilt'; reason?: string | undefined; size: number } {
    return { outcome: this.ann.openOutcome, reason: this.ann.rebuildReason, size: this.ann.size };
  }

  /** Runs `fn` against the open database, mapping engine failures to PalaceErrors. */
  run<T>(fn: () => T): T {
    if (this.closed) throw new PalaceError('store_unavailable', 'the sqlite drawer index is closed', { store: SQLITE_STORE, retryable: false });
    try {
      return fn();
    } catch (e) {
      throw mapError(e);
    }
  }

  /** Upserts rows with their vectors and lexical tokens inside the caller's transaction. */
  writeRows(drawers: readonly DrawerWrite[], generation: number): void {
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
      const seq = upsertDrawer.get(d.id, d.content, JSON.stringify(m), m.wing, m.room, m.source_file, m.parent_drawer_id ?? null, m.parent_entry_id ?? null,
        m.filed_at) as number;
      upsertVector.run(seq, encodeVector(d.embedding), generation);
      deleteTokens.run(seq);
      insertTokens.run(seq, lexicalText(d.content));
    }
  }

  /** Runs `write` in one immediate transaction stamped with a new generation; the graph follows in the background. */
  transact(write: (generation: number) => number[]): number[] {
    const deleted = this.db.transaction(() => write(bumpGeneration(this.db))).immediate();
    this.ann.removeLabels(deleted);
    this.ann.catchUpSoon();
    return deleted;
  }

  /** Repair: rewrites every FTS row from the drawers' text and rebuilds the ANN graph from SQLite. */
  rebuildDerived(): { fts_rows: number; ann_labels: number } {
    return this.run(() => {
      const page = this.db.prepare('SELECT seq, content FROM drawers WHERE seq > ? ORDER BY seq LIMIT 1000').raw();
      const insert = this.db.prepare('INSERT INTO drawer_fts (rowid, tokens) VALUES (?, ?)');
      const ftsRows = this.db.transaction(() => {
        this.db.prepare("INSERT INTO drawer_fts (drawer_fts) VALUES ('delete-all')").run();
        let n = 0;
        for (let after = 0;;) {
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
