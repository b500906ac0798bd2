/**
 * The records of the logstream (docs/logstream.md §3): events and artifacts as drafted, stored and
 * received from a peer, the event query, and the mesh state. Both logstream ports speak them.
 */
/** Routing and content of one event, the same whether drafted, stored or received (docs/logstream.md §3.2). */
export interface EventContent {
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
}

/** One event as validated by palace/logstream, before the store stamps it. */
export interface EventDraft extends EventContent {
  /** Canonical JSON text (sorted keys), stored and returned parsed. */
  metadata_json: string;
  /** De-duplicated, submission order; every id must name a stored artifact. */
  artifact_ids: string[];
}

/** A stored event; its keys are serialised in the order of docs/logstream.md §3.1 by the palace layer. */
export interface StoredEvent extends EventContent {
  id: string;
  seq: number;
  origin_replica: string;
  origin_seq: number;
  hlc: string;
  /** Submission order in the append result, ascending by id on every later read (docs/logstream.md §3.1, D1). */
  artifact_ids: string[];
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
 * One event query (docs/logstream.md §5.3), already validated. Filters combine with AND; `to_agent`
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

/** A stored event with what a relay serves onward: the origin's signature and chain link. */
export type ReplicatedEvent = StoredEvent & { sig: string | null; prev_origin_seq: number | null };

/**
 * An event as a peer serves it, checked by palace/logstream/sync.ts; its `metadata` already
 * canonical text. Sync events carry the origin's signature and chain link (imports do not).
 */
export type RemoteEvent = Omit<StoredEvent, 'seq' | 'metadata'> & { metadata_json: string; sig?: string; prev_origin_seq?: number };

/** An artifact as a peer serves it, its hash verified and `size_bytes` recomputed locally. */
export type RemoteArtifact = Omit<StoredArtifact, 'metadata'> & { metadata_json: string; sig?: string };

/** The highest seq either adapter mints or accepts: every number stays exact in a JS number. */
export const MAX_SEQ = Number.MAX_SAFE_INTEGER;

/**
 * Peer state records (docs/logstream.md §8.7) by peer name and known node profiles (docs/logstream.md §8.8) by replica id, as JSON
 * objects the palace layer shapes, plus when and by whom they were published.
 */
export interface MeshState {
  peers: Record<string, Record<string, unknown>>;
  profiles: Record<string, Record<string, unknown>>;
  published_at: string | null;
}
