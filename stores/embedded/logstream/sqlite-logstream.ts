/**
 * The embedded logstream (docs/logstream.md §10): `<palaceDir>/logstream.sqlite3`, format-compatible
 * with the original's file. `seq` is the implicit rowid, so the table keeps its rowid and the
 * file is never VACUUMed. Every write is one `BEGIN IMMEDIATE` transaction, which serialises
 * appends from any number of processes and gives one total order.
 */
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { PalaceError, isPalaceError, storeUnavailable } from '../../../core/errors.js';
import type { Logstream } from '../../ports/logstream/local-log.js';
import type { LogstreamReplication } from '../../ports/logstream/replication.js';
import { MAX_SEQ, type ArtifactDraft, type ArtifactRecord, type EventDraft, type EventQuery, type MeshState, type RemoteArtifact, type RemoteEvent,
  type ReplicatedEvent, type StoredArtifact, type StoredEvent } from '../../ports/logstream/records.js';
import { newStampedId } from '../../shared/logstream/ids.js';
import { parseMetadata } from '../../shared/logstream/metadata.js';
import { waitForMatches } from '../../shared/logstream/wait.js';
import { observe, renderHlc, tick, utcSecond, type HlcState } from './clock.js';
import { ChangeNotifier, DATA_VERSION_POLL_MS } from './notify.js';
import { writeWithBusyRetry } from '../sqlite-busy.js';
import { openSharedSqlite, SQLITE_STORE } from '../sqlite-open.js';
import { loadOrMintReplicaId } from './replica.js';
import { loadOrMintReplicaKey } from './replica-key.js';

export const LOGSTREAM_FILE = 'logstream.sqlite3';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  id TEXT PRIMARY KEY,
  type TEXT NOT NULL,
  stream TEXT NOT NULL,
  room TEXT NOT NULL,
  topic TEXT,
  from_agent TEXT NOT NULL,
  to_agent TEXT,
  correlation_id TEXT,
  branch TEXT,
  base_commit TEXT,
  status TEXT,
  body TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  metadata_json TEXT NOT NULL DEFAULT '{}',
  origin_replica TEXT,
  origin_seq INTEGER,
  hlc TEXT
);
CREATE TABLE IF NOT EXISTS artifacts (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  size_bytes INTEGER NOT NULL,
  content TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  metadata_json TEXT NOT NULL DEFAULT '{}',
  origin_replica TEXT
);
CREATE TABLE IF NOT EXISTS event_artifacts (
  event_id TEXT NOT NULL,
  artifact_id TEXT NOT NULL,
  PRIMARY KEY (event_id, artifact_id)
);
CREATE TABLE IF NOT EXISTS mesh_state (
  key TEXT PRIMARY KEY,
  value_json TEXT NOT NULL
);
`;

// Columns later versions added; an older file gains them on open (docs/logstream.md §10.3 step 2).
const ADDED_COLUMNS: [table: string, column: string, type: string][] = [
  ['events', 'topic', 'TEXT'],
  ['events', 'origin_replica', 'TEXT'],
  ['events', 'origin_seq', 'INTEGER'],
  ['events', 'hlc', 'TEXT'],
  ['artifacts', 'origin_replica', 'TEXT'],
  // The origin's signature and chain link of a replicated record (issue 24, M1); null for own ones.
  ['events', 'sig', 'TEXT'],
  ['events', 'prev_origin_seq', 'INTEGER'],
  ['artifacts', 'sig', 'TEXT'],
];

const INDEXES = `
CREATE INDEX IF NOT EXISTS events_stream_created_idx ON events(stream, created_at);
CREATE INDEX IF NOT EXISTS events_correlation_idx ON events(correlation_id, created_at);
CREATE INDEX IF NOT EXISTS events_to_agent_idx ON events(to_agent, created_at);
CREATE INDEX IF NOT EXISTS events_type_idx ON events(type, created_at);
CREATE INDEX IF NOT EXISTS events_topic_created_idx ON events(topic, created_at);
CREATE INDEX IF NOT EXISTS artifacts_sha256_idx ON artifacts(sha256);
CREATE INDEX IF NOT EXISTS events_correlation_rowid_idx ON events(correlation_id);
CREATE INDEX IF NOT EXISTS events_to_agent_rowid_idx ON events(to_agent);
CREATE INDEX IF NOT EXISTS events_from_agent_rowid_idx ON events(from_agent);
CREATE INDEX IF NOT EXISTS events_stream_rowid_idx ON events(stream);
CREATE INDEX IF NOT EXISTS events_topic_rowid_idx ON events(topic);
CREATE INDEX IF NOT EXISTS events_type_rowid_idx ON events(type);
`;

const REPLICATION_INDEXES = `
CREATE UNIQUE INDEX IF NOT EXISTS events_origin_seq_idx ON events(origin_replica, origin_seq);
CREATE INDEX IF NOT EXISTS events_hlc_idx ON events(hlc);
`;

const EVENT_COLUMNS =
  'rowid AS seq, id, origin_replica, origin_seq, hlc, type, stream, room, topic, from_agent, to_agent, correlation_id, branch, base_commit, status, body, created_at, metadata_json';

/** An `events` row: the stored event without its artifact ids (a table of their own), metadata as text. */
type EventRow = Omit<StoredEvent, 'artifact_ids' | 'metadata'> & { metadata_json: string };

/** An `artifacts` row: metadata as text. */
type ArtifactRow = Omit<StoredArtifact, 'metadata'> & { metadata_json: string };

function toEvent(row: EventRow, artifactIds: string[]): StoredEvent {
  return {
    id: row.id,
    seq: row.seq,
    origin_replica: row.origin_replica,
    origin_seq: row.origin_seq,
    hlc: row.hlc,
    type: row.type,
    stream: row.stream,
    room: row.room,
    topic: row.topic,
    from_agent: row.from_agent,
    to_agent: row.to_agent,
    correlation_id: row.correlation_id,
    branch: row.branch,
    base_commit: row.base_commit,
    status: row.status,
    artifact_ids: artifactIds,
    body: row.body,
    created_at: row.created_at,
    metadata: parseMetadata(row.metadata_json),
  };
}

function toArtifactRecord(row: Omit<ArtifactRow, 'content' | 'metadata_json'>): ArtifactRecord {
  return { id: row.id, kind: row.kind, sha256: row.sha256, size_bytes: row.size_bytes, created_by: row.created_by, created_at: row.created_at,
    origin_replica: row.origin_replica };
}

export interface SqliteLogstreamOptions {
  /** Interval of the cross-process `data_version` poll while someone waits (docs/logstream.md §10.5: 250 ms). */
  pollIntervalMs?: number;
}

export class SqliteLogstream implements Logstream, LogstreamReplication {
  readonly storeName = SQLITE_STORE;
  private readonly db: Database.Database;
  private readonly notifier: ChangeNotifier;
  private clock: HlcState = { ms: 0, counter: 0 };
  private readonly statements = new Map<string, Database.Statement>();

  private constructor(
    readonly file: string,
    private readonly replica: string,
    private readonly signingKeyPem: string,
    options: SqliteLogstreamOptions,
  ) {
    this.db = openSharedSqlite(file, { busyTimeoutMs: 10_000, synchronous: 'FULL' });
    this.notifier = new ChangeNotifier(() => this.db.pragma('data_version', { simple: true }) as number, options.pollIntervalMs ?? DATA_VERSION_POLL_MS);
  }

  /** Open (creating if needed) the logstream of the palace at `palaceDir`. */
  static async open(palaceDir: string, options: SqliteLogstreamOptions = {}): Promise<SqliteLogstream> {
    try {
      fs.mkdirSync(palaceDir, { recursive: true, mode: 0o700 });
      const replica = loadOrMintReplicaId(palaceDir);
      const logstream = new SqliteLogstream(path.join(palaceDir, LOGSTREAM_FILE), replica, loadOrMintReplicaKey(palaceDir), options);
      await logstream.migrate();
      return logstream;
    } catch (e) {
      throw isPalaceError(e) ? e : storeUnavailable(SQLITE_STORE, e);
    }
  }

  /** True when the file already has every table, column and index and no pre-replication rows. */
  private isCurrent(): boolean {
    const names = new Set((this.db.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')").all() as { name: string }[]).map((r) => r.name));
    const wanted = [...`${SCHEMA}${INDEXES}${REPLICATION_INDEXES}`.matchAll(/IF NOT EXISTS (\w+)/g)].map((m) => m[1]!);
    if (!wanted.every((n) => names.has(n))) return false;
    for (const [table, column] of ADDED_COLUMNS) {
      if (!(this.db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).some((c) => c.name === column)) return false;
    }
    return !this.db.prepare('SELECT 1 FROM events WHERE origin_replica IS NULL LIMIT 1').get() &&
      !this.db.prepare('SELECT 1 FROM artifacts WHERE origin_replica IS NULL LIMIT 1').get();
  }

  /**
   * docs/logstream.md §10.3: tables, added columns, backfill of pre-replication rows, indexes, clock seed. The
   * write transaction is skipped when nothing is missing, so opening a current file never
   * competes with appenders for the write lock.
   */
  private async migrate(): Promise<void> {
    if (!this.isCurrent()) await writeWithBusyRetry(SQLITE_STORE, () => this.migrateNow());
    this.clock = observe(this.clock, this.maxHlc(), Date.now());
  }

  private migrateNow(): void {
    this.db.transaction(() => {
      this.db.exec(SCHEMA);
      for (const [table, column, type] of ADDED_COLUMNS) {
        const columns = this.db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[];
        if (!columns.some((c) => c.name === column)) this.db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
      }
      this.db.exec(INDEXES);
      const legacy = this.db.prepare('SELECT rowid AS seq, created_at FROM events WHERE origin_replica IS NULL').all() as { seq: number; created_at: string }[];
      const backfill = this.db.prepare('UPDATE events SET origin_replica = ?, origin_seq = ?, hlc = ? WHERE rowid = ?');
      for (const row of legacy) {
        const ms = Date.parse(row.created_at);
        const hlc = renderHlc({ ms: Number.isFinite(ms) ? ms : 0, counter: Math.min(row.seq, 0xffffff) }, this.replica);
        backfill.run(this.replica, row.seq, hlc, row.seq);
      }
      this.db.prepare('UPDATE artifacts SET origin_replica = ? WHERE origin_replica IS NULL').run(this.replica);
      this.db.exec(REPLICATION_INDEXES);
    }).immediate();
  }

  private stmt(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  /** Run `fn`, turning engine failures into retryable store errors; PalaceErrors pass through. */
  private guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      throw isPalaceError(e) ? e : storeUnavailable(SQLITE_STORE, e);
    }
  }

  private ownSeqFloor(): number {
    const row = this.stmt("SELECT value_json FROM mesh_state WHERE key = 'own_seq_floor'").get() as { value_json: string } | undefined;
    return row ? Number(JSON.parse(row.value_json)) : 0;
  }

  private maxRowid(): number {
    return (this.stmt('SELECT coalesce(max(rowid), 0) AS top FROM events').get() as { top: number }).top;
  }

  private maxHlc(): string | null {
    return (this.stmt('SELECT max(hlc) AS hlc FROM events').get() as { hlc: string | null }).hlc;
  }

  /** The body of every local append; runs inside a write transaction. */
  private insertEvent(draft: EventDraft): StoredEvent {
    const known = this.stmt('SELECT 1 FROM artifacts WHERE id = ?');
    for (const artifactId of draft.artifact_ids) {
      if (!known.get(artifactId)) {
        throw new PalaceError('not_found', `unknown artifact ${artifactId}`, { field: 'artifact_ids', rule: 'known_artifact',
          details: { artifact_id: artifactId } });
      }
    }
    const now = Date.now();
    // Another process may have appended since our last tick: observe the stored maximum first.
    this.clock = tick(observe(this.clock, this.maxHlc(), now), now);
    const hlc = renderHlc(this.clock, this.replica);
    const created_at = utcSecond(now);
    const insert = this.stmt(
      `INSERT INTO events (rowid, id, type, stream, room, topic, from_agent, to_agent, correlation_id, branch, base_commit, status, body, created_at, metadata_json, origin_replica, hlc)
      VALUES (@rowid, @id, @type, @stream, @room, @topic, @from_agent, @to_agent, @correlation_id, @branch, @base_commit, @status, @body, @created_at, @metadata_json, @origin_replica, @hlc)`,
    );
    let id = newStampedId('evt', now);
    // The random part makes a collision practically impossible; a retry costs nothing if it happens.
    while (this.stmt('SELECT 1 FROM events WHERE id = ?').get(id)) id = newStampedId('evt', now);
    const { artifact_ids: _ids, ...columns } = draft;
    // docs/logstream.md §10.7: after a restore, own origin_seq values (= rowid) stay above what peers already hold.
    const floor = this.ownSeqFloor();
    const rowid = floor > 0 && floor >= this.maxRowid() ? floor + 1 : null;
    if ((rowid ?? this.maxRowid() + 1) > MAX_SEQ)
      throw new PalaceError('internal', `the next seq would pass ${MAX_SEQ}; refusing to mint an inexact number`, { rule: 'safe_integer' });
    const seq = Number(insert.run({ ...columns, id, created_at, origin_replica: this.replica, hlc, rowid }).lastInsertRowid);
    this.stmt('UPDATE events SET origin_seq = rowid WHERE rowid = ?').run(seq);
    const link = this.stmt('INSERT INTO event_artifacts (event_id, artifact_id) VALUES (?, ?)');
    for (const artifactId of draft.artifact_ids) link.run(id, artifactId);
    const row = this.stmt(`SELECT ${EVENT_COLUMNS} FROM events WHERE rowid = ?`).get(seq) as EventRow;
    return toEvent(row, [...draft.artifact_ids]);
  }

  private insertArtifact(draft: ArtifactDraft): ArtifactRecord {
    const now = Date.now();
    let id = newStampedId('art', now);
    while (this.stmt('SELECT 1 FROM artifacts WHERE id = ?').get(id)) id = newStampedId('art', now);
    const row = { id, kind: draft.kind, sha256: draft.sha256, size_bytes: draft.size_bytes, content: draft.content, created_by: draft.created_by,
      created_at: utcSecond(now), metadata_json: draft.metadata_json, origin_replica: this.replica };
    this.stmt(`INSERT INTO artifacts (id, kind, sha256, size_bytes, content, created_by, created_at, metadata_json, origin_replica)
      VALUES (@id, @kind, @sha256, @size_bytes, @content, @created_by, @created_at, @metadata_json, @origin_replica)`).run(row);
    return toArtifactRecord(row);
  }

  /** One immediate write transaction, then wake this process's waiters. */
  private async write<T>(fn: () => T): Promise<T> {
    const result = await writeWithBusyRetry(SQLITE_STORE, () => this.db.transaction(fn).immediate());
    this.notifier.notify();
    return result;
  }

  async replicaId(): Promise<string> {
    return this.replica;
  }

  async signingKey(): Promise<string> {
    return this.signingKeyPem;
  }

  async append(draft: EventDraft): Promise<StoredEvent> {
    return this.write(() => this.insertEvent(draft));
  }

  async appendFor(targetId: string, build: (target: StoredEvent) => EventDraft): Promise<StoredEvent | null> {
    return this.write(() => {
      const target = this.readEvent(targetId);
      return target ? this.insertEvent(build(target)) : null;
    });
  }

  async putArtifact(draft: ArtifactDraft): Promise<ArtifactRecord> {
    return this.write(() => this.insertArtifact(draft));
  }

  async submitPatch(artifact: ArtifactDraft, event: EventDraft): Promise<{ artifact: ArtifactRecord; event: StoredEvent }> {
    return this.write(() => {
      const stored = this.insertArtifact(artifact);
      return { artifact: stored, event: this.insertEvent({ ...event, artifact_ids: [stored.id] }) };
    });
  }

  async getArtifact(id: string): Promise<StoredArtifact | null> {
    return this.guard(() => {
      const row = this.stmt('SELECT id, kind, sha256, size_bytes, content, created_by, created_at, metadata_json, origin_replica FROM artifacts WHERE id = ?')
        .get(id) as ArtifactRow | undefined;
      if (!row) return null;
      return { ...toArtifactRecord(row), content: row.content, metadata: parseMetadata(row.metadata_json) };
    });
  }

  private readEvent(id: string): StoredEvent | null {
    const row = this.stmt(`SELECT ${EVENT_COLUMNS} FROM events WHERE id = ?`).get(id) as EventRow | undefined;
    return row ? this.withArtifacts([row])[0]! : null;
  }

  async getEvent(id: string): Promise<StoredEvent | null> {
    return this.guard(() => this.readEvent(id));
  }

  async seqOf(eventId: string): Promise<number | null> {
    return this.guard(() => {
      const row = this.stmt('SELECT rowid AS seq FROM events WHERE id = ?').get(eventId) as { seq: number } | undefined;
      return row ? row.seq : null;
    });
  }

  private withArtifacts(rows: EventRow[]): StoredEvent[] {
    const links = new Map<string, string[]>();
    if (rows.length > 0) {
      const found = this.stmt('SELECT event_id, artifact_id FROM event_artifacts WHERE event_id IN (SELECT value FROM json_each(?)) ORDER BY artifact_id').all(
        JSON.stringify(rows.map((r) => r.id)),
      ) as { event_id: string; artifact_id: string }[];
      for (const l of found) {
        const list = links.get(l.event_id);
        if (list) list.push(l.artifact_id);
        else links.set(l.event_id, [l.artifact_id]);
      }
    }
    return rows.map((r) => toEvent(r, links.get(r.id) ?? []));
  }

  private query(q: EventQuery): StoredEvent[] {
    const conditions: [sql: string, value: unknown][] = [
      ...(['stream', 'room', 'topic', 'type', 'from_agent', 'correlation_id', 'status'] as const).map((c): [string, unknown] => [`${c} = ?`, q[c]]),
      ["to_agent IN (?, '*')", q.to_agent],
      ['rowid > ?', q.afterSeq],
      ['rowid < ?', q.beforeSeq],
      ['created_at >= ?', q.sinceCreatedAt],
    ];
    const given = conditions.filter(([, value]) => value !== undefined);
    const where = given.length ? ` WHERE ${given.map(([sql]) => sql).join(' AND ')}` : '';
    const sql = `SELECT ${EVENT_COLUMNS} FROM events${where} ORDER BY rowid ${q.order === 'desc' ? 'DESC' : 'ASC'} LIMIT ?`;
    const params = [...given.map(([, value]) => value), q.limit];
    return this.withArtifacts(this.stmt(sql).all(...params) as EventRow[]);
  }

  async list(query: EventQuery): Promise<StoredEvent[]> {
    return this.guard(() => this.query(query));
  }

  async waitForEvents(query: Omit<EventQuery, 'order' | 'beforeSeq'>, timeoutMs: number, signal?: AbortSignal): Promise<StoredEvent[]> {
    const deadline = Date.now() + timeoutMs;
    return waitForMatches(deadline, this.notifier.subscribe(), () => this.guard(() => this.query({ ...query, order: 'asc' })), signal);
  }

  async versionVector(): Promise<Record<string, number>> {
    return this.guard(() => {
      const rows = this.stmt(
        'SELECT origin_replica AS origin, max(origin_seq) AS top FROM events WHERE origin_replica IS NOT NULL GROUP BY origin_replica ORDER BY origin_replica',
      ).all() as { origin: string; top: number }[];
      return Object.fromEntries(rows.map((r) => [r.origin, r.top]));
    });
  }

  async scanArtifacts(cursor: string | undefined, limit: number): Promise<{ items: StoredArtifact[]; next?: string }> {
    return this.guard(() => {
      const rows = this.stmt(
        'SELECT id, kind, sha256, size_bytes, content, created_by, created_at, metadata_json, origin_replica FROM artifacts WHERE id > ? ORDER BY id LIMIT ?',
      )
        .all(cursor ?? '', limit) as ArtifactRow[];
      const items = rows.map((row) => ({ ...toArtifactRecord(row), content: row.content, metadata: parseMetadata(row.metadata_json) }));
      return rows.length < limit ? { items } : { items, next: rows[rows.length - 1]!.id };
    });
  }

  async opsAfter(origin: string, afterOriginSeq: number, limit: number): Promise<ReplicatedEvent[]> {
    return this.guard(() => {
      const rows = this.stmt(
        `SELECT ${EVENT_COLUMNS}, sig, prev_origin_seq FROM events WHERE origin_replica = ? AND origin_seq > ? ORDER BY origin_seq LIMIT ?`,
      ).all(origin, afterOriginSeq, limit) as (EventRow & { sig: string | null; prev_origin_seq: number | null })[];
      const events = this.withArtifacts(rows);
      return events.map((e, i) => ({ ...e, sig: rows[i]!.sig, prev_origin_seq: rows[i]!.prev_origin_seq }));
    });
  }

  async originTop(origin: string, atMost: number): Promise<number> {
    return this.guard(() =>
      (this.stmt('SELECT coalesce(max(origin_seq), 0) AS top FROM events WHERE origin_replica = ? AND origin_seq <= ?').get(origin, atMost) as { top: number })
        .top
    );
  }

  async hasArtifact(id: string): Promise<boolean> {
    return this.guard(() => this.stmt('SELECT 1 FROM artifacts WHERE id = ?').get(id) !== undefined);
  }

  async artifactSignature(id: string): Promise<string | null> {
    return this.guard(() => (this.stmt('SELECT sig FROM artifacts WHERE id = ?').get(id) as { sig: string | null } | undefined)?.sig ?? null);
  }

  async applyRemoteArtifact(a: RemoteArtifact): Promise<boolean> {
    return this.write(() => {
      if (this.stmt('SELECT 1 FROM artifacts WHERE id = ?').get(a.id)) return false;
      this.stmt(`INSERT INTO artifacts (id, kind, sha256, size_bytes, content, created_by, created_at, metadata_json, origin_replica, sig)
        VALUES (@id, @kind, @sha256, @size_bytes, @content, @created_by, @created_at, @metadata_json, @origin_replica, @sig)`).run({ ...a,
        sig: a.sig ?? null });
      return true;
    });
  }

  async reserveOwnSeqAbove(originSeq: number): Promise<boolean> {
    return writeWithBusyRetry(SQLITE_STORE, () =>
      this.db.transaction(() => {
        if (!Number.isSafeInteger(originSeq) || originSeq >= MAX_SEQ) throw new PalaceError('invalid_argument',
            `origin_seq ${originSeq} leaves no exact seq above it`, { field: 'origin_seq', rule: 'safe_integer' });
        if (originSeq <= this.ownSeqFloor()) return false;
        this.stmt("INSERT INTO mesh_state (key, value_json) VALUES ('own_seq_floor', ?) ON CONFLICT (key) DO UPDATE SET value_json = excluded.value_json").run(
          JSON.stringify(originSeq),
        );
        return true;
      }).immediate());
  }

  async applyRemoteEvent(e: RemoteEvent, options: { reclaimOwn?: boolean } = {}): Promise<'applied' | 'own_origin' | 'duplicate' | 'gap'> {
    if (e.origin_replica === this.replica && !options.reclaimOwn) return 'own_origin';
    return this.write(() => {
      if (this.stmt('SELECT 1 FROM events WHERE id = ?').get(e.id)) return 'duplicate';
      if (this.stmt('SELECT 1 FROM events WHERE origin_replica = ? AND origin_seq = ?').get(e.origin_replica, e.origin_seq)) return 'duplicate';
      const known = this.stmt('SELECT 1 FROM artifacts WHERE id = ?');
      for (const artifactId of e.artifact_ids) {
        if (!known.get(artifactId)) {
          throw new PalaceError('not_found', `unknown artifact ${artifactId}`, { field: 'artifact_ids', rule: 'known_artifact',
            details: { artifact_id: artifactId } });
        }
      }
      if (e.prev_origin_seq !== undefined) {
        const below =
          (this.stmt('SELECT coalesce(max(origin_seq), 0) AS top FROM events WHERE origin_replica = ? AND origin_seq < ?').get(e.origin_replica,
            e.origin_seq) as { top: number }).top;
        const above = this.stmt('SELECT 1 FROM events WHERE origin_replica = ? AND origin_seq > ? LIMIT 1').get(e.origin_replica, e.origin_seq);
        if (below !== e.prev_origin_seq || (above && !options.reclaimOwn)) return 'gap';
      }
      if (this.maxRowid() >= MAX_SEQ)
        throw new PalaceError('internal', `the next seq would pass ${MAX_SEQ}; refusing to mint an inexact number`, { rule: 'safe_integer' });
      const { artifact_ids: _ids, ...columns } = e;
      this.stmt(
        `INSERT INTO events (id, type, stream, room, topic, from_agent, to_agent, correlation_id, branch, base_commit, status, body, created_at, metadata_json, origin_replica, origin_seq, hlc, sig, prev_origin_seq)
        VALUES (@id, @type, @stream, @room, @topic, @from_agent, @to_agent, @correlation_id, @branch, @base_commit, @status, @body, @created_at, @metadata_json, @origin_replica, @origin_seq, @hlc, @sig, @prev_origin_seq)`,
      ).run({ ...columns, sig: e.sig ?? null, prev_origin_seq: e.prev_origin_seq ?? null });
      const link = this.stmt('INSERT INTO event_artifacts (event_id, artifact_id) VALUES (?, ?)');
      for (const artifactId of e.artifact_ids) link.run(e.id, artifactId);
      this.clock = observe(this.clock, e.hlc, Date.now());
      return 'applied';
    });
  }

  async readMeshState(): Promise<MeshState> {
    return this.guard(() => {
      const rows = this.stmt('SELECT key, value_json FROM mesh_state').all() as { key: string; value_json: string }[];
      const value = (key: string) => {
        const row = rows.find((r) => r.key === key);
        return row ? (JSON.parse(row.value_json) as unknown) : null;
      };
      return {
        peers: (value('peers') ?? {}) as MeshState['peers'],
        profiles: (value('profiles') ?? {}) as MeshState['profiles'],
        published_at: value('published_at') as string | null,
      };
    });
  }

  async publishMeshState(state: MeshState): Promise<void> {
    await writeWithBusyRetry(SQLITE_STORE, () =>
      this.db.transaction(() => {
        const put = this.stmt('INSERT INTO mesh_state (key, value_json) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value_json = excluded.value_json');
        for (const [key, value] of Object.entries(state)) put.run(key, JSON.stringify(value));
      }).immediate());
  }

  async close(): Promise<void> {
    this.notifier.stop();
    if (this.db.open) this.db.close();
  }
}

/** The composition root's entry point for the embedded profile. */
export function openSqliteLogstream(palaceDir: string, options?: SqliteLogstreamOptions): Promise<SqliteLogstream> {
  return SqliteLogstream.open(palaceDir, options);
}
