/**
 * The ports of the palace: what `palace/` needs from storage, written once and implemented by
 * every adapter (`embedded/` SQLite, `opensearch/`, `neo4j/`, `redis/`). Contract suites under
 * tests/contract/ define their meaning; adapters may not differ on anything a suite observes.
 */
import type { Drawer, DrawerWrite } from '../core/drawer.js';
import type { ModelIdentity } from '../embed/model-identity.js';

// ---------------------------------------------------------------------------------------------
// Drawers

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

/** One way a derived index differs from the drawers it is built from. */
export interface IndexFinding {
  /** `fts`, `ann`, `embeddings`, `opensearch:drawers`, ... */
  part: string;
  problem: string;
  count?: number;
  /** A few affected row ids or labels. */
  sample?: Array<string | number>;
}

export interface IndexCheck {
  store: string;
  findings: IndexFinding[];
  /** Sizes and versions seen (rows, labels, index names), for the report. */
  facts: Record<string, unknown>;
}

/**
 * Maintenance of what the drawer store derives from its rows (embedded: the FTS table and the
 * ANN graph; OpenSearch: the index behind the alias). `check` changes nothing; `rebuild`
 * rebuilds from the system of record and says what it did.
 */
export interface IndexMaintenance {
  check(): Promise<IndexCheck>;
  rebuild(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Graph: knowledge graph, tunnels, hallways (GraphStore)

/**
 * Validity keys: the palace turns each temporal value into a UTC instant `YYYY-MM-DDTHH:MM:SSZ`
 * once (start key for `valid_from`/`as_of`/`at`, end key for `valid_to`/`ended`, DECISIONS 7),
 * so every adapter compares plain strings and never parses dates. A fact holds at instant `t`
 * iff `(from_key IS NULL OR from_key <= t) AND (to_key IS NULL OR to_key > t)`.
 */
export interface KgEntityRef {
  /** Normalised entity id (lowercase, spaces to `_`, apostrophes removed). */
  id: string;
  /** Spelling used when the entity is first created; an existing entity keeps its first one. */
  name: string;
}

/** A triple to store; the id and `recorded_at` are made by the palace so adapters agree. */
export interface KgTripleWrite {
  id: string;
  subject: KgEntityRef;
  predicate: string;
  object: KgEntityRef;
  /** As given by the caller (validated), returned verbatim. */
  valid_from: string | null;
  valid_to: string | null;
  from_key: string | null;
  to_key: string | null;
  confidence: number;
  source_closet: string | null;
  source_file: string | null;
  source_drawer_id: string | null;
  adapter_name: string | null;
  /** UTC instant with microseconds; with `id` it orders facts in storage order. */
  recorded_at: string;
}

export interface KgTriple {
  id: string;
  subject_id: string;
  /** The entity's stored (first) spelling. */
  subject_name: string;
  predicate: string;
  object_id: string;
  object_name: string;
  valid_from: string | null;
  valid_to: string | null;
  from_key: string | null;
  to_key: string | null;
  confidence: number;
  source_closet: string | null;
  source_file: string | null;
  source_drawer_id: string | null;
  adapter_name: string | null;
  recorded_at: string;
}

/** An end that would fall before an open fact's start; nothing was written. */
export interface KgInvertedInterval {
  status: 'inverted';
  triple_id: string;
  valid_from: string | null;
}

export interface KgStatsRow {
  entities: number;
  triples: number;
  /** Triples with no `valid_to`. */
  current_facts: number;
  /** Distinct predicates, ascending. */
  relationship_types: string[];
}

export type KgDirection = 'outgoing' | 'incoming' | 'both';

export interface TunnelEndpoint {
  wing: string;
  room: string;
  drawer_id?: string;
}

export type TunnelKind = 'explicit' | 'topic' | 'entity';

/** Connection dynamics (palace-behaviour §11.5), kept across re-creation and recomputation. */
export interface ConnectionDynamics {
  strength: number;
  stability: number;
  last_activated: string;
  access_count: number;
}

export interface TunnelRecord extends ConnectionDynamics {
  /** Symmetric: hash16 of the two sorted `wing/room` endpoints. */
  id: string;
  source: TunnelEndpoint;
  target: TunnelEndpoint;
  label: string;
  kind: TunnelKind;
  created_at: string;
  updated_at?: string;
}

export interface TunnelWrite {
  id: string;
  source: TunnelEndpoint;
  target: TunnelEndpoint;
  label: string;
  kind: TunnelKind;
  /** Slug of each endpoint's wing (the palace's one normalisation), for wing lookups. */
  source_wing_key: string;
  target_wing_key: string;
  /** The write's instant: `created_at` of a new record, `updated_at` of an existing one. */
  at: string;
}

export interface TunnelFilter {
  /** Tunnels with an endpoint whose wing key equals this ... */
  wing_key?: string | undefined;
  /** ... and, when set, whose room equals this exactly (on that same endpoint). */
  room?: string | undefined;
}

export interface HallwayRecord extends ConnectionDynamics {
  id: string;
  wing: string;
  entity_a: string;
  entity_b: string;
  co_occurrence_count: number;
  rooms: string[];
  label: string;
  created_at: string;
  created_by: string;
}

export type HallwayWrite = Omit<HallwayRecord, keyof ConnectionDynamics>;

/**
 * Knowledge graph, explicit/topic/entity tunnels and hallways. Every method is one atomic unit
 * on the engine (one SQLite transaction, one Cypher transaction); none reads and then writes
 * across calls, so concurrent callers never lose an update.
 */
export interface GraphStore {
  /** The store's name in errors (`sqlite`, `neo4j`). */
  readonly storeName: string;

  /**
   * Create missing subject/object entities, then insert `triple` unless an equivalent fact
   * exists: for an open triple (no `to_key`) an open triple with the same subject, predicate
   * and object; for a closed one a triple with the same subject, predicate, object, `from_key`
   * and `to_key`. Returns the stored or existing id.
   */
  kgAdd(triple: KgTripleWrite): Promise<{ triple_id: string; inserted: boolean }>;
  /**
   * Close every open (subject, predicate, object) triple with `valid_to = ended`, `to_key =
   * ended_key`. If any of them has `from_key > max_from_key` nothing is written and the first
   * such triple is reported.
   */
  kgInvalidate(q: { subject_id: string; predicate: string; object_id: string; ended: string; ended_key: string; max_from_key: string }): Promise<{ status: 'ok'; closed: number } | KgInvertedInterval>;
  /**
   * One transaction: create missing entities (subject, old and new object); close every open
   * (subject, predicate, old object) triple at `successor.valid_from`/`from_key` (the boundary);
   * then return the open (subject, predicate, new object) triple if one exists, else insert
   * `successor`. If an open old triple starts after the boundary nothing is written.
   */
  kgSupersede(q: { old_object: KgEntityRef; successor: KgTripleWrite }): Promise<{ status: 'ok'; triple_id: string; inserted: boolean; closed: number } | KgInvertedInterval>;
  /**
   * Facts of one entity valid at `as_of_key` (all when absent): outgoing (`subject_id = id`)
   * first, then incoming (`object_id = id`); each direction ordered by (recorded_at, id).
   */
  kgFacts(q: { entity_id: string; direction: KgDirection; as_of_key?: string | undefined }): Promise<Array<KgTriple & { direction: 'outgoing' | 'incoming' }>>;
  /**
   * Facts touching the entity (or all), ordered by `from_key` ascending with nulls last, then
   * (recorded_at, id); at most `limit`.
   */
  kgTimeline(q: { entity_id?: string | undefined; limit: number }): Promise<KgTriple[]>;
  kgStats(): Promise<KgStatsRow>;

  /**
   * Insert or update each tunnel by id, in order, atomically. An existing record gets the
   * write's endpoints, label and kind and `updated_at = at`, keeping `created_at` and its
   * dynamics; a new one gets `created_at = at` and default dynamics. Returns the stored records.
   */
  tunnelUpsert(writes: TunnelWrite[]): Promise<TunnelRecord[]>;
  /** Tunnels in storage order: (created_at, id) ascending. */
  tunnelList(filter?: TunnelFilter): Promise<TunnelRecord[]>;
  tunnelDelete(id: string): Promise<boolean>;
  tunnelCount(): Promise<number>;

  /**
   * Replace one wing's hallways atomically: its old records go, `writes` come in, and a new
   * record whose id existed before keeps that record's dynamics. Returns the stored records.
   */
  hallwaysReplaceWing(wing: string, writes: HallwayWrite[]): Promise<HallwayRecord[]>;
  /** Hallways of one wing (exact match) or all, ordered by (wing, entity_a, entity_b). */
  hallwayList(wing?: string): Promise<HallwayRecord[]>;
  hallwayDelete(id: string): Promise<boolean>;

  /**
   * Backup and migration: up to `limit` triples in storage order (recorded_at, id), starting
   * after the triple `after` names.
   */
  kgScan(after: { recorded_at: string; id: string } | undefined, limit: number): Promise<KgTriple[]>;
  /**
   * Restore triples verbatim (id, validity, `recorded_at`, entity names), in one transaction; a
   * triple whose id is held is left as it is, missing entities are created with the triple's
   * spelling. Returns how many were inserted.
   */
  kgRestore(triples: KgTriple[]): Promise<number>;
  /** Restore tunnel records verbatim by id (timestamps and dynamics included), atomically. */
  tunnelRestore(records: TunnelRestore[]): Promise<void>;
  /** Restore hallway records verbatim by id (dynamics included), atomically. */
  hallwayRestore(records: HallwayRecord[]): Promise<void>;

  close(): Promise<void>;
}

/** A tunnel record with the wing keys it is looked up by. */
export interface TunnelRestore extends TunnelRecord {
  source_wing_key: string;
  target_wing_key: string;
}

// ---------------------------------------------------------------------------------------------
// Coordination: logstream and locks (Logstream, Locks)
/** Routing and content of one event as validated by palace/logstream (logstream.md §3.2). */
export interface EventDraft {
  type: string;
  stream: string;
  room: string;
  topic: string | null;
  from_agent: string;
  to_agent: string | null;
  correlation_id: string | null;
  branch: string | null;
  base_commit: string | null;
  status: string | null;
  body: string;
  /** Canonical JSON text (sorted keys), stored and returned parsed. */
  metadata_json: string;
  /** De-duplicated, submission order; every id must name a stored artifact. */
  artifact_ids: string[];
}

/** A stored event in the key order of logstream.md §3.1. */
export interface StoredEvent {
  id: string;
  seq: number;
  origin_replica: string;
  origin_seq: number;
  hlc: string;
  type: string;
  stream: string;
  room: string;
  topic: string | null;
  from_agent: string;
  to_agent: string | null;
  correlation_id: string | null;
  branch: string | null;
  base_commit: string | null;
  status: string | null;
  /** Submission order in the append result, ascending by id on every later read (§3.1, D1). */
  artifact_ids: string[];
  body: string;
  created_at: string;
  metadata: Record<string, unknown>;
}

export interface ArtifactDraft {
  kind: string;
  content: string;
  /** Lowercase hex SHA-256 of the UTF-8 bytes of `content`, and their count. */
  sha256: string;
  size_bytes: number;
  created_by: string;
  metadata_json: string;
}

/** An artifact without its content (the shape `artifact_put` returns, minus warnings). */
export interface ArtifactRecord {
  id: string;
  kind: string;
  sha256: string;
  size_bytes: number;
  created_by: string;
  created_at: string;
  origin_replica: string | null;
}

export interface StoredArtifact extends ArtifactRecord {
  content: string;
  metadata: Record<string, unknown>;
}

/**
 * One event query (logstream.md §5.3), already validated. Filters combine with AND; `to_agent`
 * also matches broadcasts (`*`). The window is in local `seq`, both ends exclusive.
 */
export interface EventQuery {
  stream?: string | undefined;
  room?: string | undefined;
  topic?: string | undefined;
  type?: string | undefined;
  to_agent?: string | undefined;
  from_agent?: string | undefined;
  correlation_id?: string | undefined;
  status?: string | undefined;
  afterSeq?: number | undefined;
  beforeSeq?: number | undefined;
  /** Inclusive lower bound, compared lexically with the stored `created_at` text. */
  sinceCreatedAt?: string | undefined;
  order: 'asc' | 'desc';
  limit: number;
}

/**
 * The append-only event log and its artifacts (logstream.md §1–§4), one replica's local view.
 * Writes are atomic; `seq` is strictly increasing in commit order across every process that
 * opens the same store. Failures of the engine are `store_unavailable` PalaceErrors.
 */
export interface Logstream {
  /** The store's name in errors (`sqlite`, `redis`). */
  readonly storeName: string;
  /** This palace's replica id (§8.1), minted once and never rotated. */
  replicaId(): Promise<string>;

  /**
   * Append one event: assigns `id`, `seq`, `created_at`, `hlc`, `origin_replica` (self) and
   * `origin_seq` (= `seq`) in one atomic write. An `artifact_ids` entry naming no stored artifact
   * refuses the whole write with a `not_found` PalaceError, rule `known_artifact`,
   * `details.artifact_id` = that id.
   */
  append(draft: EventDraft): Promise<StoredEvent>;
  /**
   * Read the target and append the event `build` makes from it, atomically with respect to the
   * target's existence (§5.5). Returns null, writing nothing, when the target does not exist;
   * an error thrown by `build` writes nothing.
   */
  appendFor(targetId: string, build: (target: StoredEvent) => EventDraft): Promise<StoredEvent | null>;
  putArtifact(draft: ArtifactDraft): Promise<ArtifactRecord>;
  /** Store the artifact and append the event citing it (its `artifact_ids` replaced by the new id) in one atomic write (§5.8). */
  submitPatch(artifact: ArtifactDraft, event: EventDraft): Promise<{ artifact: ArtifactRecord; event: StoredEvent }>;

  getArtifact(id: string): Promise<StoredArtifact | null>;
  getEvent(id: string): Promise<StoredEvent | null>;
  /** Local `seq` of an event id, or null when no such event is held (cursor resolution). */
  seqOf(eventId: string): Promise<number | null>;
  /** Matching events ordered by `seq` in `query.order`, at most `query.limit`. */
  list(query: EventQuery): Promise<StoredEvent[]>;
  /**
   * Up to `limit` matching events in ascending `seq`, blocking until at least one exists or
   * `timeoutMs` passes (then `[]`). Woken by the store itself (another process's commit wakes
   * it), never by this process's memory alone; the query is re-run on every wake-up.
   */
  waitForEvents(query: Omit<EventQuery, 'order' | 'beforeSeq'>, timeoutMs: number, signal?: AbortSignal): Promise<StoredEvent[]>;
  /** `{ origin_replica: highest origin_seq held }` over every stored event (§8.2). */
  versionVector(): Promise<Record<string, number>>;

  /**
   * Backup and migration: up to about `limit` artifacts with their content per call, every
   * stored artifact at least once over a walk from `cursor` undefined until `next` is absent
   * (engine order; the cursor is opaque).
   */
  scanArtifacts(cursor: string | undefined, limit: number): Promise<{ items: StoredArtifact[]; next?: string }>;
  // Replication (§7.3, §8.3–§8.4, §10.6, §11.8).
  /** Events authored by `origin` with `origin_seq > afterOriginSeq`, ascending `origin_seq`, at most `limit`. */
  opsAfter(origin: string, afterOriginSeq: number, limit: number): Promise<StoredEvent[]>;
  /** The highest `origin_seq` held for `origin` that is at most `atMost` (0 when none). */
  originTop(origin: string, atMost: number): Promise<number>;
  hasArtifact(id: string): Promise<boolean>;
  /** Store a peer's artifact verbatim (id, created_at, origin_replica kept); false, writing nothing, when the id is held. */
  applyRemoteArtifact(artifact: RemoteArtifact): Promise<boolean>;
  /**
   * Store a peer's event verbatim with a new local `seq` and observe its `hlc`, atomically.
   * `own_origin` (our own op echoed back, unless `reclaimOwn`) and `duplicate` (same `id`, or same
   * `(origin_replica, origin_seq)`) write nothing. A cited artifact not held refuses the write
   * with a `not_found` PalaceError, rule `known_artifact`, `details.artifact_id`.
   */
  applyRemoteEvent(event: RemoteEvent, options?: { reclaimOwn?: boolean }): Promise<'applied' | 'own_origin' | 'duplicate'>;
  /**
   * §10.7 (restores): a peer holds this replica's own events up to `originSeq`, more than the
   * store does. From now on local appends get `origin_seq` (= `seq`) above it, so no number a
   * peer already holds is minted twice; returns whether the counter moved. Own events pulled
   * back then go through `applyRemoteEvent` with `reclaimOwn`.
   */
  reserveOwnSeqAbove(originSeq: number): Promise<boolean>;
  /** The mesh state the sync loop last published, shared by every process of the palace. */
  readMeshState(): Promise<MeshState>;
  publishMeshState(state: MeshState): Promise<void>;
  close(): Promise<void>;
}

/** An event as a peer serves it, checked by palace/logstream-sync; its `metadata` already canonical text. */
export type RemoteEvent = Omit<StoredEvent, 'seq' | 'metadata'> & { metadata_json: string };

/** An artifact as a peer serves it, its hash verified and `size_bytes` recomputed locally. */
export type RemoteArtifact = Omit<StoredArtifact, 'metadata'> & { metadata_json: string };

/**
 * Peer state records (§8.7) by peer name and known node profiles (§8.8) by replica id, as JSON
 * objects the palace layer shapes, plus when and by whom they were published.
 */
export interface MeshState {
  peers: Record<string, Record<string, unknown>>;
  profiles: Record<string, Record<string, unknown>>;
  published_at: string | null;
}

/** The current lease of one key. */
export interface LeaseInfo {
  holder: string;
  token: number;
  /** Epoch milliseconds after which the lease is void. */
  expiresAtMs: number;
}

/**
 * Leases with fencing tokens. A key has at most one unexpired lease. Every successful `acquire`
 * of a key returns a token greater than any token ever handed out for that key (release and
 * expiry do not reset it), so a writer that lost its lease is recognised by its old token.
 * Acquiring a key that holds an unexpired lease fails, even for the same holder.
 */
export interface Locks {
  readonly storeName: string;
  acquire(key: string, holder: string, ttlMs: number): Promise<{ token: number } | null>;
  /** Extend the lease to now + ttlMs; false when this holder no longer holds this token unexpired. */
  renew(key: string, holder: string, token: number, ttlMs: number): Promise<boolean>;
  /** Give the lease up; false when this holder no longer held this token (nothing changes then). */
  release(key: string, holder: string, token: number): Promise<boolean>;
  /**
   * Throws a `stale_lease` PalaceError unless `token` is the token of the key's current,
   * unexpired lease. Writers guarded by a lease call this before each write.
   */
  check(key: string, token: number): Promise<void>;
  /** The current unexpired lease, or null. */
  holder(key: string): Promise<LeaseInfo | null>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Jobs: records, manifests and plans of long-running jobs (JobStore)

/** One file of a scanned source, as stored in a job's manifest. */
export interface ManifestEntry {
  relativePath: string;
  absolutePath: string;
  size: number;
  mtimeMs: number;
  /** Listed only to record why it is not mined (a symlink): the reason kept in its file state. */
  skip?: { reason: string; detail: string };
}

/**
 * A job as the store keeps it. `spec`, `progress` and `cursor` are opaque JSON to adapters; the
 * job engines name their types (palace/jobs.ts `JobSpec`, `JobProgress`) as the parameters, so
 * this port needs nothing from palace/.
 */
export interface JobRecord<Spec = unknown, Progress = unknown> {
  job_id: string;
  kind: string;
  lock_key: string;
  state: string;
  spec: Spec;
  progress: Progress;
  cursor?: unknown;
  created_at: string;
  updated_at: string;
}

/** How a registered source's latest refresh went (written by the refresh handler). */
export interface SourceRefresh {
  /** What asked for it: a git push webhook, or a person/agent (CLI, REST). */
  trigger: 'webhook' | 'manual';
  requested_at: string;
  /** The mine it ran; absent while it waits for a running job on the same source. */
  job_id?: string;
  state: 'waiting' | 'running' | 'completed' | 'failed' | 'cancelled';
  finished_at?: string;
  /** Commit mined (git sources). */
  commit?: string;
  drawers_written?: number;
  error?: string;
}

/** A source the palace follows (`mempalace sources add`): refreshed by webhooks or on request. */
export interface RegisteredSource {
  source_id: string;
  kind: 'git' | 'dir';
  /** The repository URL as given, or the absolute directory. */
  location: string;
  /** Normalised repository identity that push payloads are matched on (git sources). */
  match_key?: string;
  ref?: string;
  wing?: string;
  mode: string;
  added_by: string;
  added_at: string;
  last_refresh?: SourceRefresh;
}

/** Job records with specs of type `Spec` and progress of type `Progress` (the JSON it was given back). */
export interface JobStore<Spec = unknown, Progress = unknown> {
  create(record: JobRecord<Spec, Progress>): Promise<void>;
  /** Replace the job's state, progress and cursor, and append the progress to its event list. */
  update(jobId: string, state: string, progress: Progress, cursor?: unknown): Promise<void>;
  get(jobId: string): Promise<JobRecord<Spec, Progress> | undefined>;
  /** The running job holding `lockKey`, if any. */
  running(lockKey: string): Promise<JobRecord<Spec, Progress> | undefined>;
  /** Newest first. */
  list(limit: number): Promise<JobRecord<Spec, Progress>[]>;
  /** Progress snapshots of a job with `seq` greater than `afterSeq`, oldest first. */
  events(jobId: string, afterSeq: number, limit: number): Promise<{ seq: number; progress: Progress }[]>;
  /**
   * Store a manifest page by page as `pages` yields them (so a scan of any size holds one page
   * in memory), replacing any earlier one under the same id once the last page is in: readers
   * see the old manifest or the whole new one, never a part, and a write that fails midway
   * leaves the old one. Returns the number of entries stored.
   */
  writeManifest(manifestId: string, pages: AsyncIterable<ManifestEntry[]>): Promise<number>;
  readManifest(manifestId: string, offset: number, count: number): Promise<ManifestEntry[]>;
  putBlob(key: string, value: unknown): Promise<void>;
  getBlob(key: string): Promise<unknown>;
  /** Drop manifests and blobs of a finished job. */
  dropArtifacts(prefix: string): Promise<void>;
  /** Add or replace a registered source (its `last_refresh` is kept when the new record has none). */
  putSource(source: RegisteredSource): Promise<void>;
  getSource(sourceId: string): Promise<RegisteredSource | undefined>;
  /** Every registered source, ordered by source id. */
  listSources(): Promise<RegisteredSource[]>;
  /** False when no such source was registered. */
  removeSource(sourceId: string): Promise<boolean>;
  /** Record a source's latest refresh; false (nothing written) when the source is not registered. */
  setSourceRefresh(sourceId: string, refresh: SourceRefresh): Promise<boolean>;
  close(): Promise<void>;
}
