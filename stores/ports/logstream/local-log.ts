/**
 * The local log port: one replica's append-only event log and its artifacts (docs/logstream.md §1–§5).
 * Implemented by `embedded/logstream/` (SQLite) and `redis/logstream/` (Redis Streams);
 * tests/contract/logstream.contract.ts defines its meaning. Mesh replication is the other port,
 * `replication.ts`.
 */
import type { ArtifactDraft, ArtifactRecord, EventDraft, EventQuery, StoredArtifact, StoredEvent } from './records.js';

/**
 * The append-only event log and its artifacts (docs/logstream.md §1–§4), one replica's local view.
 * Writes are atomic; `seq` is strictly increasing in commit order across every process that
 * opens the same store. Failures of the engine are `store_unavailable` PalaceErrors.
 */
export interface Logstream {
  /** The store's name in errors (`sqlite`, `redis`). */
  readonly storeName: string;
  /** This palace's replica id (docs/logstream.md §8.1), minted once and never rotated. */
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
   * target's existence (docs/logstream.md §5.5). Returns null, writing nothing, when the target does not exist;
   * an error thrown by `build` writes nothing.
   */
  appendFor(targetId: string, build: (target: StoredEvent) => EventDraft): Promise<StoredEvent | null>;
  putArtifact(draft: ArtifactDraft): Promise<ArtifactRecord>;
  /** Store the artifact and append the event citing it (its `artifact_ids` replaced by the new id) in one atomic write (docs/logstream.md §5.8). */
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
  /** `{ origin_replica: highest origin_seq held }` over every stored event (docs/logstream.md §8.2). */
  versionVector(): Promise<Record<string, number>>;

  /**
   * Backup and migration: up to about `limit` artifacts with their content per call, every
   * stored artifact at least once over a walk from `cursor` undefined until `next` is absent
   * (engine order; the cursor is opaque).
   */
  scanArtifacts(cursor: string | undefined, limit: number): Promise<{ items: StoredArtifact[]; next?: string }>;
  close(): Promise<void>;
}
