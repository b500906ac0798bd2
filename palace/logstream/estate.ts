/**
 * The mesh estate of this node (docs/logstream.md §8.8–§8.9), the payload of `mesh_peers` and
 * `GET /sync/peers`, and the version-vector answer of `GET /sync/version_vector` (docs/logstream.md §7.3). Peer
 * state records and known profiles come from the store, where the process holding the sync
 * lease publishes them after every round (palace/logstream-replicator.ts), so every process of
 * the palace answers with the same data. A peer never synced yet is listed as `{ name, url }`.
 *
 * Additive keys on each synced peer: `lag_events` — events the peer held at its last
 * successful contact that this replica still lacks (the sum over origins of the vector
 * difference) — and `lag_s`, seconds since that contact; plus `consecutive_failures` and
 * `retry_at` while the loop backs off from an unreachable peer.
 */
import os from 'node:os';
import type { Locks } from '../../stores/ports/locks.js';
import type { LogstreamReplication } from '../../stores/ports/logstream/replication.js';
import type { MeshState } from '../../stores/ports/logstream/records.js';
import { publicKeyText } from './signature.js';

/** The lease of the sync loop: one process per palace runs it (docs/logstream.md §8.6, §11.8). */
export const SYNC_LEASE_KEY = 'logstream:sync';

/** This process as the sync-lease holder; the estate compares it with the lease to set `in_process`. */
export function syncHolderId(): string {
  return `${os.hostname()}:${process.pid}:mesh-sync`;
}

export interface PeerEntry {
  name: string;
  url: string;
}

/** Best-effort facts about this process; logstream code never asks the drawer store itself. */
export interface NodeFacts {
  /** A drawer store exists here (role `replica`). */
  drawerStore: boolean;
  drawers: number | null;
  accelerator: { provider: string; embedder: string } | null;
}

export interface MeshOptions {
  /** `self.name`: `MEMPALACE_REPLICA_NAME`, defaulting to the host name (config.replicaName). */
  replicaName: string;
  /** `MEMPALACE_SYNC_INTERVAL` in seconds; 15 when absent. */
  syncIntervalS?: number | undefined;
  /** Configured peers in file order. A failure (e.g. a malformed peers file) lists none. */
  peers?: (() => Promise<PeerEntry[]>) | undefined;
  nodeFacts?: (() => Promise<NodeFacts>) | undefined;
  /** The palace's leases: whether the sync lease is held, and by this process. */
  locks?: Locks | undefined;
}

export interface NodeProfile {
  roles: ('replica' | 'agents' | 'compute')[];
  accelerator: { provider: string; embedder: string } | null;
  drawers: number | null;
  hardware: string;
  advertised_at: string;
}

/** A configured peer with its last published state record, if any. */
export type EstatePeer = PeerEntry & Record<string, unknown>;

export interface MeshEstate {
  /** `public_key`: what peers put in their peers file to accept this replica's records. */
  self: { replica_id: string; name: string; public_key: string; version_vector: Record<string, number>; profile: NodeProfile };
  peers: EstatePeer[];
  unnamed_origins: string[];
  origin_profiles: Record<string, NodeProfile>;
  sync_interval_s: number;
  estate_source: { in_process: boolean; published_at: string | null; writer_alive: boolean };
}

export const PROFILE_CACHE_MS = 60_000;
const profileCache = new WeakMap<MeshOptions, { atMs: number; profile: NodeProfile }>();

export async function selfProfile(options: MeshOptions, authoredEvents: number): Promise<NodeProfile> {
  const cached = profileCache.get(options);
  if (cached && Date.now() - cached.atMs < PROFILE_CACHE_MS) return cached.profile;
  let facts: NodeFacts = { drawerStore: false, drawers: null, accelerator: null };
  try {
    if (options.nodeFacts) facts = await options.nodeFacts();
  } catch {
    // Best-effort (docs/logstream.md §6): an unavailable palace index degrades the profile, never the estate.
  }
  const roles: NodeProfile['roles'] = [];
  if (facts.drawerStore) roles.push('replica');
  if (authoredEvents > 0) roles.push('agents');
  if (facts.accelerator) roles.push('compute');
  const now = Date.now();
  const profile: NodeProfile = {
    roles,
    accelerator: facts.accelerator,
    drawers: facts.drawers,
    hardware: `${os.type()}-${os.release()}-${os.arch()}`,
    advertised_at: `${new Date(now).toISOString().slice(0, 19)}Z`,
  };
  profileCache.set(options, { atMs: now, profile });
  return profile;
}

async function publishedState(logstream: LogstreamReplication): Promise<MeshState> {
  try {
    return await logstream.readMeshState();
  } catch {
    return { peers: {}, profiles: {}, published_at: null };
  }
}

/** docs/logstream.md §8.8 snapshot: published profiles, overlaid by the fresh self profile (self always wins for self). */
function knownProfiles(state: MeshState, replicaId: string, profile: NodeProfile): Record<string, NodeProfile> {
  return { ...(state.profiles as unknown as Record<string, NodeProfile>), [replicaId]: profile };
}

/** Events the peer held at its last contact that this replica lacks (own origin excluded). */
function lagEvents(remote: unknown, local: Record<string, number>, self: string): number {
  let lag = 0;
  for (const [origin, top] of Object.entries((remote ?? {}) as Record<string, number>)) {
    if (origin !== self && typeof top === 'number') lag += Math.max(0, top - (local[origin] ?? 0));
  }
  return lag;
}

/** `GET /sync/version_vector` (docs/logstream.md §7.3): the vector plus this node's profile and the known profiles. */
export async function versionVectorPayload(logstream: LogstreamReplication,
  options: MeshOptions
): Promise<{ replica_id: string; public_key: string; version_vector: Record<string, number>; profile: NodeProfile; profiles: Record<string, NodeProfile> }> {
  const replicaId = await logstream.replicaId();
  const versionVector = await logstream.versionVector();
  const profile = await selfProfile(options, versionVector[replicaId] ?? 0);
  return { replica_id: replicaId, public_key: publicKeyText(await logstream.signingKey()), version_vector: versionVector, profile,
    profiles: knownProfiles(await publishedState(logstream), replicaId, profile) };
}

export async function meshEstate(logstream: LogstreamReplication, options: MeshOptions): Promise<MeshEstate> {
  const replicaId = await logstream.replicaId();
  const versionVector = await logstream.versionVector();
  const profile = await selfProfile(options, versionVector[replicaId] ?? 0);
  const state = await publishedState(logstream);
  let configured: PeerEntry[];
  try {
    configured = options.peers ? await options.peers() : [];
  } catch {
    configured = [];
  }
  const now = Date.now();
  // Copy only name and url from the configuration, so nothing else a peers source carries (tokens) can leak.
  const peers: EstatePeer[] = configured.map((p) => {
    const record = state.peers[p.name];
    if (!record) return { name: p.name, url: p.url };
    const { url: _url, ...rest } = record;
    const lastSuccess = typeof rest.last_success_at === 'string' ? Date.parse(rest.last_success_at) : Number.NaN;
    return {
      name: p.name,
      url: p.url,
      ...rest,
      lag_events: rest.remote_version_vector ? lagEvents(rest.remote_version_vector, versionVector, replicaId) : null,
      lag_s: Number.isFinite(lastSuccess) ? Math.max(0, Math.round((now - lastSuccess) / 1000)) : null,
    };
  });
  const peerReplicas = new Set(peers.map((p) => p.replica_id).filter((id): id is string => typeof id === 'string'));
  // Best-effort like the profile: an unavailable lock store reports no live writer.
  const lease = options.locks ? await options.locks.holder(SYNC_LEASE_KEY).catch(() => null) : null;
  return {
    self: { replica_id: replicaId, name: options.replicaName, public_key: publicKeyText(await logstream.signingKey()), version_vector: versionVector, profile },
    peers,
    unnamed_origins: Object.keys(versionVector).filter((origin) => origin !== replicaId && !peerReplicas.has(origin)).sort(),
    origin_profiles: knownProfiles(state, replicaId, profile),
    sync_interval_s: options.syncIntervalS ?? 15,
    estate_source: { in_process: lease?.holder === syncHolderId(), published_at: state.published_at, writer_alive: lease !== null },
  };
}
