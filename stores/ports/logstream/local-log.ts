/**
 * The logstream port: the append-only event log, its artifacts, replication and the shared mesh
 * state (logstream.md). Implemented by `embedded/` (SQLite) and `redis/` (Redis Streams);
 * tests/contract/logstream.contract.ts defines its meaning.
 */

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
  /** This replica's Ed25519 signing key as PKCS#8 PEM, minted with the replica id and kept beside it. */
  signingKey(): Promise<string>;

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
  /**
   * Events authored by `origin` with `origin_seq > afterOriginSeq`, ascending `origin_seq`, at
   * most `limit`, each with the origin's signature and chain link as received (null for own
   * events and for events stored before signing existed).
   */
  opsAfter(origin: string, afterOriginSeq: number, limit: number): Promise<ReplicatedEvent[]>;
  /** The highest `origin_seq` held for `origin` that is at most `atMost` (0 when none). */
  originTop(origin: string, atMost: number): Promise<number>;
  hasArtifact(id: string): Promise<boolean>;
  /** The origin's signature stored with a peer's artifact (null for own artifacts and unsigned ones). */
  artifactSignature(id: string): Promise<string | null>;
  /** Store a peer's artifact verbatim (id, created_at, origin_replica kept); false, writing nothing, when the id is held. */
  applyRemoteArtifact(artifact: RemoteArtifact): Promise<boolean>;
  /**
   * Store a peer's event verbatim with a new local `seq` and observe its `hlc`, atomically.
   * `own_origin` (our own op echoed back, unless `reclaimOwn`) and `duplicate` (same `id`, or same
   * `(origin_replica, origin_seq)`) write nothing. A cited artifact not held refuses the write
   * with a `not_found` PalaceError, rule `known_artifact`, `details.artifact_id`.
   *
   * With `prev_origin_seq` set (a signed sync event), the write is also atomic with the chain
   * check: the highest `origin_seq` held for the origin below the event's must equal it, and,
   * unless `reclaimOwn`, none may be held above it; otherwise `gap` is returned and nothing is
   * written. So the version vector stays a contiguous watermark per origin.
   */
  applyRemoteEvent(event: RemoteEvent, options?: { reclaimOwn?: boolean }): Promise<'applied' | 'own_origin' | 'duplicate' | 'gap'>;
  /**
   * §10.7 (restores): a peer holds this replica's own events up to `originSeq`, more than the
   * store does. From now on local appends get `origin_seq` (= `seq`) above it, so no number a
   * peer already holds is minted twice; returns whether the counter moved. Own events pulled
   * back then go through `applyRemoteEvent` with `reclaimOwn`. A number that would put the next
   * seq past 2^53 − 1 is refused (`invalid_argument`, rule `safe_integer`): seqs stay exact.
   */
  reserveOwnSeqAbove(originSeq: number): Promise<boolean>;
  /** The mesh state the sync loop last published, shared by every process of the palace. */
  readMeshState(): Promise<MeshState>;
  publishMeshState(state: MeshState): Promise<void>;
  close(): Promise<void>;
}

/** A stored event with what a relay serves onward: the origin's signature and chain link. */
export type ReplicatedEvent = StoredEvent & { sig: string | null; prev_origin_seq: number | null };

/**
 * An event as a peer serves it, checked by palace/logstream-sync; its `metadata` already
 * canonical text. Sync events carry the origin's signature and chain link (imports do not).
 */
export type RemoteEvent = Omit<StoredEvent, 'seq' | 'metadata'> & { metadata_json: string; sig?: string; prev_origin_seq?: number };

/** An artifact as a peer serves it, its hash verified and `size_bytes` recomputed locally. */
export type RemoteArtifact = Omit<StoredArtifact, 'metadata'> & { metadata_json: string; sig?: string };

/** The highest seq either adapter mints or accepts: every number stays exact in a JS number. */
export const MAX_SEQ = Number.MAX_SAFE_INTEGER;

/**
 * Peer state records (§8.7) by peer name and known node profiles (§8.8) by replica id, as JSON
 * objects the palace layer shapes, plus when and by whom they were published.
 */
export interface MeshState {
  peers: Record<string, Record<string, unknown>>;
  profiles: Record<string, Record<string, unknown>>;
  published_at: string | null;
}
