/**
 * Schema of `drawers.sqlite3`, the embedded profile's system of record for drawers. Created and
 * migrated idempotently; `PRAGMA user_version` records the applied version.
 */
import type Database from 'better-sqlite3';
import { migrateSqlite } from '../sqlite-open.js';

// `seq` is the drawer's row number and its label in the ANN index. AUTOINCREMENT keeps labels
// from ever being reused, so a stale ANN entry can never point at a different drawer.
// The FTS table indexes only the product's whitespace-joined token stream (core/lexical). The
// `ascii` tokenizer treats every non-ASCII code point as a token character and, with `._-` as
// token characters, splits that stream on whitespace alone, keeping each product token whole.
const V1 = `
CREATE TABLE palace_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE drawers (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  content TEXT NOT NULL,
  meta TEXT NOT NULL,
  wing TEXT NOT NULL,
  room TEXT NOT NULL,
  source_file TEXT NOT NULL,
  parent_drawer_id TEXT,
  parent_entry_id TEXT,
  filed_at TEXT NOT NULL
);
CREATE INDEX drawers_wing_room ON drawers (wing, room);
CREATE INDEX drawers_wing_source ON drawers (wing, source_file);
CREATE INDEX drawers_source ON drawers (source_file);
CREATE INDEX drawers_room ON drawers (room);
CREATE INDEX drawers_parent_drawer ON drawers (parent_drawer_id) WHERE parent_drawer_id IS NOT NULL;
CREATE INDEX drawers_parent_entry ON drawers (parent_entry_id) WHERE parent_entry_id IS NOT NULL;
CREATE INDEX drawers_filed ON drawers (filed_at, id);
CREATE TABLE drawer_embeddings (
  seq INTEGER PRIMARY KEY REFERENCES drawers (seq) ON DELETE CASCADE,
  vector BLOB NOT NULL,
  gen INTEGER NOT NULL
);
CREATE INDEX drawer_embeddings_gen ON drawer_embeddings (gen);
CREATE VIRTUAL TABLE drawer_fts USING fts5 (
  tokens, tokenize = "ascii tokenchars '._-'", content = '', contentless_delete = 1
);
CREATE TRIGGER drawers_delete_fts AFTER DELETE ON drawers BEGIN
  DELETE FROM drawer_fts WHERE rowid = old.seq;
END;
CREATE TABLE file_states (
  wing TEXT NOT NULL,
  source_file TEXT NOT NULL,
  size INTEGER NOT NULL,
  mtime_ms REAL NOT NULL,
  content_sha256 TEXT NOT NULL,
  drawer_count INTEGER NOT NULL,
  mined_at TEXT NOT NULL,
  extra TEXT,
  PRIMARY KEY (wing, source_file)
) WITHOUT ROWID;
`;

// v2: logical listing groups rows by their logical id; index that expression.
const V2 = `
CREATE INDEX drawers_logical ON drawers (coalesce(parent_drawer_id, parent_entry_id, id));
`;

// v3: metadata walks of one wing in id order (scanMetadata) read the index range, no sort.
const V3 = `
CREATE INDEX drawers_wing_id ON drawers (wing, id);
`;

const MIGRATIONS: readonly string[] = [V1, V2, V3];
export const DRAWER_SCHEMA_VERSION = MIGRATIONS.length;

/** The temp fts5vocab table over `drawer_fts`: one row per term with its document count. */
export const FTS_VOCABULARY = 'drawer_fts_vocabulary';

/** Connection settings every opener applies, then the schema up to the current version. */
export function prepareDrawerDatabase(db: Database.Database): void {
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  db.pragma('synchronous = NORMAL');
  migrateSqlite(db, 'drawers.sqlite3', MIGRATIONS);
  // Per connection, not in the file: document frequencies of lexical tokens (lexical-tokens.ts).
  db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.${FTS_VOCABULARY} USING fts5vocab(main, drawer_fts, 'row')`);
}

export function readMeta(db: Database.Database, key: string): string | undefined {
  const row = db.prepare('SELECT value FROM palace_meta WHERE key = ?').get(key) as { value: string } | undefined;
  return row?.value;
}

export function writeMeta(db: Database.Database, key: string, value: string | number): void {
  db.prepare('INSERT INTO palace_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(key, String(value));
}
