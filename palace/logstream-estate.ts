/**
 * The mesh estate of this node (logstream.md §8.8–§8.9), the payload of `mesh_peers` and
 * `GET /sync/peers`. Until a sync loop publishes peer state records, configured peers are
 * listed as never synced (`{ name, url }`), and the estate says that nothing was published.
 */
import os from 'node:os';
import type { Logstream } from '../stores/ports.js';

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
}

export interface NodeProfile {
  roles: ('replica' | 'agents' | 'compute')[];
  accelerator: { provider: string; embedder: string } | null;
  drawers: number | null;
  hardware: string;
  advertised_at: string;
}

export interface MeshEstate {
  self: { replica_id: string; name: string; version_vector: Record<string, number>; profile: NodeProfile };
  peers: PeerEntry[];
  unnamed_origins: string[];
  origin_profiles: Record<string, NodeProfile>;
  sync_interval_s: number;
  estate_source: { in_process: boolean; published_at: string | null; writer_alive: boolean };
}

export const PROFILE_CACHE_MS = 60_000;
const profileCache = new WeakMap<MeshOptions, { atMs: number; profile: NodeProfile }>();

async function selfProfile(options: MeshOptions, authoredEvents: number): Promise<NodeProfile> {
  const cached = profileCache.get(options);
  if (cached && Date.now() - cached.atMs < PROFILE_CACHE_MS) return cached.profile;
  let facts: NodeFacts = { drawerStore: false, drawers: null, accelerator: null };
  try {
    if (options.nodeFacts) facts = await options.nodeFacts();
  } catch {
    // Best-effort (§6): an unavailable palace index degrades the profile, never the estate.
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

export async function meshEstate(logstream: Logstream, options: MeshOptions): Promise<MeshEstate> {
  const replicaId = await logstream.replicaId();
  const versionVector = await logstream.versionVector();
  const profile = await selfProfile(options, versionVector[replicaId] ?? 0);
  let peers: PeerEntry[];
  try {
    // Copy only name and url, so nothing else a peers source carries (tokens) can leak.
    peers = (options.peers ? await options.peers() : []).map((p) => ({ name: p.name, url: p.url }));
  } catch {
    peers = [];
  }
  return {
    self: { replica_id: replicaId, name: options.replicaName, version_vector: versionVector, profile },
    peers,
    unnamed_origins: Object.keys(versionVector).filter((origin) => origin !== replicaId).sort(),
    origin_profiles: { [replicaId]: profile },
    sync_interval_s: options.syncIntervalS ?? 15,
    estate_source: { in_process: false, published_at: null, writer_alive: false },
  };
}
