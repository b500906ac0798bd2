/**
 * GraphStore on SQLite (embedded profile): `<palaceDir>/graph.sqlite3`, WAL, one connection.
 * Each port call is one immediate transaction, so a second process on the same palace waits
 * for the lock instead of interleaving a read-modify-write.
 */
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { isPalaceError, storeUnavailable } from '../../core/errors.js';
import { defaultDynamics, dynamicsById, hallwayRecord, storedTunnel, toHallwayRecord, toKgTriple, toTunnelRecord, tunnelWriteFields, type StoredHallway,
  type StoredTunnel } from '../shared/graph-records.js';
import { migrateSqlite, openSharedSqlite } from './sqlite-open.js';
import type { ConnectionDynamics, GraphStore, HallwayRecord, HallwayWrite, KgDirection, KgEntityRef, KgFactChange, KgInvertedInterval, KgStatsRow, KgTriple,
  KgTripleWrite, TunnelFilter, TunnelRecord, TunnelRestore, TunnelWrite } from '../ports/graph-store.js';

const STORE = 'sqlite';
export const GRAPH_DB_FILE = 'graph.sqlite3';

// Tunnels and hallways both keep connection dynamics (docs/palace-behaviour.md §11.5).
const DYNAMICS_COLUMNS = 'strength REAL NOT NULL, stability REAL NOT NULL, last_activated TEXT NOT NULL, access_count INTEGER NOT NULL';

/** `MIGRATIONS[v]` takes the file from schema version v to v + 1 (migrateSqlite). */
const MIGRATIONS: readonly string[] = [
  // v1: the graph as first released.
  `
CREATE TABLE IF NOT EXISTS kg_entities (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  type TEXT NOT NULL DEFAULT 'unknown',
  properties TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS kg_triples (
  id TEXT PRIMARY KEY,
  subject TEXT NOT NULL REFERENCES kg_entities(id),
  predicate TEXT NOT NULL,
  object TEXT NOT NULL REFERENCES kg_entities(id),
  valid_from TEXT,
  valid_to TEXT,
  from_key TEXT,
  to_key TEXT,
  confidence REAL NOT NULL DEFAULT 1.0,
  source_closet TEXT,
  source_file TEXT,
  source_drawer_id TEXT,
  adapter_name TEXT,
  recorded_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS kg_triples_spo ON kg_triples(subject, predicate, object);
CREATE INDEX IF NOT EXISTS kg_triples_object ON kg_triples(object);
CREATE INDEX IF NOT EXISTS kg_triples_predicate ON kg_triples(predicate);
CREATE INDEX IF NOT EXISTS kg_triples_validity ON kg_triples(from_key, to_key);
CREATE INDEX IF NOT EXISTS kg_triples_recorded ON kg_triples(recorded_at, id);

CREATE TABLE IF NOT EXISTS tunnels (
  id TEXT PRIMARY KEY,
  source_wing TEXT NOT NULL, source_room TEXT NOT NULL, source_drawer_id TEXT, source_wing_key TEXT NOT NULL,
  target_wing TEXT NOT NULL, target_room TEXT NOT NULL, target_drawer_id TEXT, target_wing_key TEXT NOT NULL,
  label TEXT NOT NULL,
  kind TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT,
  ${DYNAMICS_COLUMNS}
);
CREATE INDEX IF NOT EXISTS tunnels_order ON tunnels(created_at, id);
CREATE INDEX IF NOT EXISTS tunnels_source ON tunnels(source_wing_key, source_room);
CREATE INDEX IF NOT EXISTS tunnels_target ON tunnels(target_wing_key, target_room);

CREATE TABLE IF NOT EXISTS hallways (
  id TEXT PRIMARY KEY,
  wing TEXT NOT NULL,
  entity_a TEXT NOT NULL, entity_b TEXT NOT NULL, co_occurrence_count INTEGER NOT NULL,
  rooms TEXT NOT NULL,
  label TEXT NOT NULL,
  created_at TEXT NOT NULL,
  created_by TEXT NOT NULL,
  ${DYNAMICS_COLUMNS}
);
CREATE INDEX IF NOT EXISTS hallways_wing ON hallways(wing, entity_a, entity_b);
`,
  // v2 (issue 28): who added a fact or created a tunnel, and who last changed it; null in records written before.
  `
ALTER TABLE kg_triples ADD COLUMN created_by TEXT;
ALTER TABLE kg_triples ADD COLUMN updated_by TEXT;
ALTER TABLE kg_triples ADD COLUMN updated_at TEXT;
ALTER TABLE tunnels ADD COLUMN created_by TEXT;
ALTER TABLE tunnels ADD COLUMN updated_by TEXT;
`,
];
const TUNNEL_COLUMNS = `id, source_wing, source_room, source_drawer_id, source_wing_key, target_wing, target_room, target_drawer_id, target_wing_key,
  label, kind, created_at, created_by, updated_at, updated_by, strength, stability, last_activated, access_count`;
const TUNNEL_LINK_VALUES = `@id, @source_wing, @source_room, @source_drawer_id, @source_wing_key, @target_wing, @target_room, @target_drawer_id,
  @target_wing_key, @label, @kind`;

/** A `TRIPLE_SELECT` row: the stored columns, entity ids in `subject` / `object`, and both names. */
interface TripleRow extends Omit<KgTriple, 'subject_id' | 'object_id'> {
  subject: string;
  object: string;
}

function toTriple(r: TripleRow): KgTriple {
  return toKgTriple(r, { subject_id: r.subject, subject_name: r.subject_name, object_id: r.object, object_name: r.object_name });
}

const TRIPLE_SELECT = `SELECT t.*, s.name AS subject_name, o.name AS object_name
  FROM kg_triples t JOIN kg_entities s ON s.id = t.subject JOIN kg_entities o ON o.id = t.object`;
const VALID_AT = `(@as_of IS NULL OR ((t.from_key IS NULL OR t.from_key <= @as_of) AND (t.to_key IS NULL OR t.to_key > @as_of)))`;

// SQLite failures that mean "the store cannot serve now" rather than a bug in the caller.
const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|CORRUPT|NOTADB|READONLY|PROTOCOL)/;

function guard<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (e) {
    if (isPalaceError(e)) return Promise.reject(e);
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && UNAVAILABLE_CODES.test(code)) return Promise.reject(storeUnavailable(STORE, e));
    return Promise.reject(e);
  }
}

class SqliteGraphStore implements GraphStore {
  readonly storeName = STORE;
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();

  constructor(file: string) {
    this.db = openSharedSqlite(file, {
      busyTimeoutMs: 5000,
      synchronous: 'NORMAL',
      setup: (db) => {
        db.pragma('foreign_keys = ON');
        migrateSqlite(db, GRAPH_DB_FILE, MIGRATIONS);
      },
    });
  }

  /** Prepared once per connection: the same few statements run on every call. */
  private stmt(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) this.statements.set(sql, statement = this.db.prepare(sql));
    return statement;
  }

  private ensureEntity(ref: KgEntityRef, at: string): void {
    this.stmt('INSERT OR IGNORE INTO kg_entities (id, name, created_at) VALUES (?, ?, ?)').run(ref.id, ref.name, at);
  }

  /** A new fact has no change yet; a restored one keeps its own. */
  private insertTriple(t: KgTripleWrite & Partial<KgFactChange>): void {
    this.stmt(`INSERT INTO kg_triples (id, subject, predicate, object, valid_from, valid_to, from_key, to_key, confidence,
        source_closet, source_file, source_drawer_id, adapter_name, recorded_at, created_by, updated_by, updated_at)
        VALUES (@id, @subject, @predicate, @object, @valid_from, @valid_to, @from_key, @to_key, @confidence,
        @source_closet, @source_file, @source_drawer_id, @adapter_name, @recorded_at, @created_by, @updated_by, @updated_at)`)
      .run({ ...t, subject: t.subject.id, object: t.object.id, updated_by: t.updated_by ?? null, updated_at: t.updated_at ?? null });
  }

  private openTriple(subject: string, predicate: string, object: string): { id: string } | undefined {
    return this.stmt('SELECT id FROM kg_triples WHERE subject = ? AND predicate = ? AND object = ? AND to_key IS NULL ORDER BY recorded_at, id LIMIT 1')
      .get(subject, predicate, object) as { id: string } | undefined;
  }

  /** The first open (s, p, o) triple starting after `maxFromKey`, if any. */
  private startsAfter(subject: string, predicate: string, object: string, maxFromKey: string): KgInvertedInterval | undefined {
    const row = this.stmt(
      'SELECT id, valid_from FROM kg_triples WHERE subject = ? AND predicate = ? AND object = ? AND to_key IS NULL AND from_key > ? ORDER BY recorded_at, id LIMIT 1',
    )
      .get(subject, predicate, object, maxFromKey) as { id: string; valid_from: string | null } | undefined;
    return row && { status: 'inverted', triple_id: row.id, valid_from: row.valid_from };
  }

  private closeOpen(subject: string, predicate: string, object: string, validTo: string, toKey: string, change: KgFactChange): number {
    return this.stmt(
      'UPDATE kg_triples SET valid_to = ?, to_key = ?, updated_by = ?, updated_at = ? WHERE subject = ? AND predicate = ? AND object = ? AND to_key IS NULL',
    )
      .run(validTo, toKey, change.updated_by, change.updated_at, subject, predicate, object).changes;
  }

  kgAdd(t: KgTripleWrite): Promise<{ triple_id: string; inserted: boolean }> {
    return guard(() =>
      this.db.transaction(() => {
        this.ensureEntity(t.subject, t.recorded_at);
        this.ensureEntity(t.object, t.recorded_at);
        const existing = t.to_key === null
          ? this.openTriple(t.subject.id, t.predicate, t.object.id)
          : (this.stmt(
            'SELECT id FROM kg_triples WHERE subject = ? AND predicate = ? AND object = ? AND from_key IS ? AND to_key = ? ORDER BY recorded_at, id LIMIT 1',
          )
            .get(t.subject.id, t.predicate, t.object.id, t.from_key, t.to_key) as { id: string } | undefined);
        if (existing) return { triple_id: existing.id, inserted: false };
        this.insertTriple(t);
        return { triple_id: t.id, inserted: true };
      }).immediate()
    );
  }

  kgInvalidate(
    q: { subject_id: string; predicate: string; object_id: string; ended: string; ended_key: string; max_from_key: string; change: KgFactChange },
  ): Promise<{ status: 'ok'; closed: number } | KgInvertedInterval> {
    return guard(() =>
      this.db.transaction((): { status: 'ok'; closed: number } | KgInvertedInterval => {
        const inverted = this.startsAfter(q.subject_id, q.predicate, q.object_id, q.max_from_key);
        if (inverted) return inverted;
        return { status: 'ok', closed: this.closeOpen(q.subject_id, q.predicate, q.object_id, q.ended, q.ended_key, q.change) };
      }).immediate()
    );
  }

  kgSupersede(
    q: { old_object: KgEntityRef; successor: KgTripleWrite },
  ): Promise<{ status: 'ok'; triple_id: string; inserted: boolean; closed: number } | KgInvertedInterval> {
    const s = q.successor;
    const boundary = s.valid_from;
    const boundaryKey = s.from_key;
    if (boundary === null || boundaryKey === null) return Promise.reject(new Error('kgSupersede: the successor must carry the boundary as valid_from'));
    return guard(() =>
      this.db.transaction((): { status: 'ok'; triple_id: string; inserted: boolean; closed: number } | KgInvertedInterval => {
        const inverted = this.startsAfter(s.subject.id, s.predicate, q.old_object.id, boundaryKey);
        if (inverted) return inverted;
        this.ensureEntity(s.subject, s.recorded_at);
        this.ensureEntity(q.old_object, s.recorded_at);
        this.ensureEntity(s.object, s.recorded_at);
        const closed = this.closeOpen(s.subject.id, s.predicate, q.old_object.id, boundary, boundaryKey, { updated_by: s.created_by,
          updated_at: s.recorded_at });
        const existing = this.openTriple(s.subject.id, s.predicate, s.object.id);
        if (existing) return { status: 'ok', triple_id: existing.id, inserted: false, closed };
        this.insertTriple(s);
        return { status: 'ok', triple_id: s.id, inserted: true, closed };
      }).immediate()
    );
  }

  kgFacts(q: { entity_id: string; direction: KgDirection; as_of_key?: string | undefined }): Promise<Array<KgTriple & { direction: 'outgoing' | 'incoming' }>> {
    return guard(() => {
      const params = { id: q.entity_id, as_of: q.as_of_key ?? null };
      const out: Array<KgTriple & { direction: 'outgoing' | 'incoming' }> = [];
      const sides = q.direction === 'both' ? (['outgoing', 'incoming'] as const) : ([q.direction] as const);
      for (const side of sides) {
        const column = side === 'outgoing' ? 't.subject' : 't.object';
        const rows = this.stmt(`${TRIPLE_SELECT} WHERE ${column} = @id AND ${VALID_AT} ORDER BY t.recorded_at, t.id`).all(params) as TripleRow[];
        for (const r of rows) out.push({ ...toTriple(r), direction: side });
      }
      return out;
    });
  }

  kgTimeline(q: { entity_id?: string | undefined; limit: number }): Promise<KgTriple[]> {
    return guard(() => {
      const where = q.entity_id === undefined ? '' : 'WHERE t.subject = @id OR t.object = @id';
      const rows = this.stmt(`${TRIPLE_SELECT} ${where} ORDER BY t.from_key IS NULL, t.from_key, t.recorded_at, t.id LIMIT @limit`)
        .all({ id: q.entity_id ?? null, limit: q.limit }) as TripleRow[];
      return rows.map(toTriple);
    });
  }

  kgSetEnd(q: { id: string; valid_to: string | null; to_key: string | null } & KgFactChange): Promise<boolean> {
    return guard(() =>
      this.stmt('UPDATE kg_triples SET valid_to = @valid_to, to_key = @to_key, updated_by = @updated_by, updated_at = @updated_at WHERE id = @id').run(q)
        .changes > 0
    );
  }

  kgStats(): Promise<KgStatsRow> {
    return guard(() =>
      this.db.transaction(() => {
        const entities = (this.stmt('SELECT COUNT(*) AS n FROM kg_entities').get() as { n: number }).n;
        const counts = this.stmt('SELECT COUNT(*) AS triples, COUNT(*) - COUNT(to_key) AS current_facts FROM kg_triples').get() as { triples: number;
          current_facts: number };
        const predicates = (this.stmt('SELECT DISTINCT predicate FROM kg_triples ORDER BY predicate').all() as { predicate: string }[]).map((r) => r.predicate);
        return { entities, triples: counts.triples, current_facts: counts.current_facts, relationship_types: predicates };
      })()
    );
  }

  tunnelUpsert(writes: TunnelWrite[]): Promise<TunnelRecord[]> {
    return guard(() =>
      this.db.transaction(() => {
        const out: TunnelRecord[] = [];
        for (const w of writes) {
          const row = { ...tunnelWriteFields(w), ...defaultDynamics(w.at) };
          this.stmt(`INSERT INTO tunnels (${TUNNEL_COLUMNS})
              VALUES (${TUNNEL_LINK_VALUES}, @at, @by, NULL, NULL, @strength, @stability, @last_activated, @access_count)
              ON CONFLICT(id) DO UPDATE SET source_wing = excluded.source_wing, source_room = excluded.source_room,
              source_drawer_id = excluded.source_drawer_id, source_wing_key = excluded.source_wing_key,
              target_wing = excluded.target_wing, target_room = excluded.target_room, target_drawer_id = excluded.target_drawer_id,
              target_wing_key = excluded.target_wing_key, label = excluded.label, kind = excluded.kind, updated_at = @at, updated_by = @by`)
            .run(row);
          out.push(toTunnelRecord(this.stmt('SELECT * FROM tunnels WHERE id = ?').get(w.id) as StoredTunnel));
        }
        return out;
      }).immediate()
    );
  }

  tunnelList(filter: TunnelFilter = {}): Promise<TunnelRecord[]> {
    return guard(() => {
      const { wing_key, room } = filter;
      let where = '';
      if (wing_key !== undefined) {
        where = room === undefined
          ? 'WHERE source_wing_key = @wing_key OR target_wing_key = @wing_key'
          : 'WHERE (source_wing_key = @wing_key AND source_room = @room) OR (target_wing_key = @wing_key AND target_room = @room)';
      } else if (room !== undefined) {
        where = 'WHERE source_room = @room OR target_room = @room';
      }
      const rows = this.stmt(`SELECT * FROM tunnels ${where} ORDER BY created_at, id`).all({ wing_key: wing_key ?? null,
        room: room ?? null }) as StoredTunnel[];
      return rows.map(toTunnelRecord);
    });
  }

  tunnelDelete(id: string): Promise<boolean> {
    return guard(() => this.stmt('DELETE FROM tunnels WHERE id = ?').run(id).changes > 0);
  }

  tunnelCount(): Promise<number> {
    return guard(() => (this.stmt('SELECT COUNT(*) AS n FROM tunnels').get() as { n: number }).n);
  }

  hallwaysReplaceWing(wing: string, writes: HallwayWrite[]): Promise<HallwayRecord[]> {
    return guard(() =>
      this.db.transaction(() => {
        const previous = dynamicsById(
          this.stmt('SELECT id, strength, stability, last_activated, access_count FROM hallways WHERE wing = ?').all(wing) as Array<
            ConnectionDynamics & { id: string }
          >,
        );
        this.stmt('DELETE FROM hallways WHERE wing = ?').run(wing);
        const insert = this.stmt(`INSERT INTO hallways (id, wing, entity_a, entity_b, co_occurrence_count, rooms, label, created_at, created_by,
          strength, stability, last_activated, access_count) VALUES (@id, @wing, @entity_a, @entity_b, @co_occurrence_count, @rooms, @label,
          @created_at, @created_by, @strength, @stability, @last_activated, @access_count)
          ON CONFLICT(id) DO UPDATE SET wing = excluded.wing, entity_a = excluded.entity_a, entity_b = excluded.entity_b,
          co_occurrence_count = excluded.co_occurrence_count, rooms = excluded.rooms, label = excluded.label,
          created_at = excluded.created_at, created_by = excluded.created_by`);
        const out: HallwayRecord[] = [];
        for (const w of writes) {
          const record = hallwayRecord(wing, w, previous);
          insert.run({ ...record, rooms: JSON.stringify(record.rooms) });
          out.push(record);
        }
        return out;
      }).immediate()
    );
  }

  hallwayList(wing?: string): Promise<HallwayRecord[]> {
    return guard(() => {
      const rows = (wing === undefined
        ? this.stmt('SELECT * FROM hallways ORDER BY wing, entity_a, entity_b').all()
        : this.stmt('SELECT * FROM hallways WHERE wing = ? ORDER BY wing, entity_a, entity_b').all(wing)) as StoredHallway[];
      return rows.map(toHallwayRecord);
    });
  }

  hallwayDelete(id: string): Promise<boolean> {
    return guard(() => this.stmt('DELETE FROM hallways WHERE id = ?').run(id).changes > 0);
  }

  kgScan(after: { recorded_at: string; id: string } | undefined, limit: number): Promise<KgTriple[]> {
    return guard(() => {
      const rows = (after === undefined
        ? this.stmt(`${TRIPLE_SELECT} ORDER BY t.recorded_at, t.id LIMIT ?`).all(limit)
        : this.stmt(`${TRIPLE_SELECT} WHERE (t.recorded_at, t.id) > (?, ?) ORDER BY t.recorded_at, t.id LIMIT ?`).all(after.recorded_at, after.id,
          limit)) as TripleRow[];
      return rows.map(toTriple);
    });
  }

  kgRestore(triples: KgTriple[]): Promise<number> {
    return guard(() =>
      this.db.transaction(() => {
        let inserted = 0;
        for (const t of triples) {
          this.ensureEntity({ id: t.subject_id, name: t.subject_name }, t.recorded_at);
          this.ensureEntity({ id: t.object_id, name: t.object_name }, t.recorded_at);
          if (this.stmt('SELECT 1 FROM kg_triples WHERE id = ?').get(t.id)) continue;
          this.insertTriple({ ...t, subject: { id: t.subject_id, name: t.subject_name }, object: { id: t.object_id, name: t.object_name } });
          inserted++;
        }
        return inserted;
      }).immediate()
    );
  }

  tunnelRestore(records: TunnelRestore[]): Promise<void> {
    return guard(() =>
      this.db.transaction(() => {
        const put = this.stmt(`INSERT OR REPLACE INTO tunnels (${TUNNEL_COLUMNS})
            VALUES (${TUNNEL_LINK_VALUES}, @created_at, @created_by, @updated_at, @updated_by, @strength, @stability, @last_activated, @access_count)`);
        for (const r of records) put.run(storedTunnel(r));
      }).immediate()
    );
  }

  hallwayRestore(records: HallwayRecord[]): Promise<void> {
    return guard(() =>
      this.db.transaction(() => {
        const put = this.stmt(`INSERT OR REPLACE INTO hallways (id, wing, entity_a, entity_b, co_occurrence_count, rooms, label, created_at, created_by,
          strength, stability, last_activated, access_count) VALUES (@id, @wing, @entity_a, @entity_b, @co_occurrence_count, @rooms, @label,
          @created_at, @created_by, @strength, @stability, @last_activated, @access_count)`);
        for (const r of records) put.run({ ...r, rooms: JSON.stringify(r.rooms) });
      }).immediate()
    );
  }

  close(): Promise<void> {
    return guard(() => {
      if (this.db.open) this.db.close();
    });
  }
}

/** Open (creating if needed) the graph database of an embedded palace. */
export async function openSqliteGraphStore(palaceDir: string): Promise<GraphStore> {
  try {
    fs.mkdirSync(palaceDir, { recursive: true });
    return new SqliteGraphStore(path.join(palaceDir, GRAPH_DB_FILE));
  } catch (e) {
    throw storeUnavailable(STORE, e);
  }
}
