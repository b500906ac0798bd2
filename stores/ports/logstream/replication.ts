/**
 * The mesh replication port (docs/logstream.md §7.3, §8, §10.6–§10.7, §11.8): what the sync loop,
 * the `/sync/*` routes and restores need beyond the local log: the signing key, ops by origin,
 * applying a peer's records verbatim and the shared mesh state. Implemented by the same adapters
 * as the local log; tests/contract/logstream-sync.contract.ts defines its meaning.
 */
import type { Logstream } from './local-log.js';
import type { MeshState, RemoteArtifact, RemoteEvent, ReplicatedEvent } from './records.js';

/** Replication names its own replica, compares version vectors and serves held records, so it shares those reads of the local log. */
export interface LogstreamReplication extends Pick<Logstream, 'storeName' | 'replicaId' | 'versionVector' | 'getEvent' | 'getArtifact'> {
  /** This replica's Ed25519 signing key as PKCS#8 PEM, minted with the replica id and kept beside it. */
  signingKey(): Promise<string>;
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
   * docs/logstream.md §10.7 (restores): a peer holds this replica's own events up to `originSeq`, more than the
   * store does. From now on local appends get `origin_seq` (= `seq`) above it, so no number a
   * peer already holds is minted twice; returns whether the counter moved. Own events pulled
   * back then go through `applyRemoteEvent` with `reclaimOwn`. A number that would put the next
   * seq past 2^53 − 1 is refused (`invalid_argument`, rule `safe_integer`): seqs stay exact.
   */
  reserveOwnSeqAbove(originSeq: number): Promise<boolean>;
  /** The mesh state the sync loop last published, shared by every process of the palace. */
  readMeshState(): Promise<MeshState>;
  publishMeshState(state: MeshState): Promise<void>;
}
