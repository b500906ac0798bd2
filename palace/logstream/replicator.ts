/**
 * The sync loop of docs/logstream.md §8.6–§8.7: in the HTTP-serving process, every
 * `MEMPALACE_SYNC_INTERVAL` seconds, one anti-entropy round against each peer of the peers file
 * (re-read every round), then the peer state records and known profiles are published to the
 * store for every process of the palace to answer `mesh_peers` with.
 *
 * Exactly one process per palace runs the rounds: the holder of the sync lease (Locks port,
 * expiry 3 × interval, renewed each round, its fencing token checked before publishing). Its
 * cursor per peer and origin is the local version vector, which the store keeps durably; the
 * peer records (last outcome, the peer's vector, failures) are published to the store too, so a
 * restarted server resumes where it was. An unreachable peer is retried with exponential backoff
 * (interval × 2^(failures−1), at most 16 intervals and 5 minutes), and never blocks the other peers.
 */
import type { Locks } from '../../stores/ports/locks.js';
import type { LogstreamReplication } from '../../stores/ports/logstream/replication.js';
import type { MeshState } from '../../stores/ports/logstream/records.js';
import { SYNC_LEASE_KEY, selfProfile, syncHolderId, type MeshOptions, type NodeProfile } from './estate.js';
import { peerLabel, pullFromPeer, type OriginKeys, type PullReport, type SyncPeer, type SyncTransport } from './sync.js';
import { parsePublicKey } from './signature.js';
import type { Logger } from '../../core/log.js';

export const MAX_BACKOFF_MS = 300_000;
/** How far ahead of this clock a peer's profile may be dated; later ones are ignored (issue 24, M4). */
export const PROFILE_SKEW_MS = 60_000;
/** Refusals kept per peer record, newest round only. */
export const REFUSALS_REPORTED = 20;

export interface ReplicatorOptions {
  /** Getters, because `mempalace_reconnect` may swap the stores under a running server. */
  logstream: () => LogstreamReplication;
  locks: () => Locks;
  /** The peers file, read every round; a throw (a malformed file) means no peers this round. */
  peers: () => Promise<SyncPeer[]>;
  /** Public keys of accepted origins by replica id (the peers file), read every round like the peers. */
  originKeys: () => Promise<Record<string, string>>;
  transport: SyncTransport;
  intervalMs: number;
  /** For the self profile merged into the known profiles. */
  mesh: MeshOptions;
  log: Logger;
}

const stamp = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;

export function backoffMs(intervalMs: number, failures: number): number {
  return Math.min(MAX_BACKOFF_MS, intervalMs * 2 ** Math.min(Math.max(failures - 1, 0), 4));
}

/**
 * docs/logstream.md §8.8: an incoming profile replaces the held one only when strictly newer by `advertised_at`.
 * A profile dated beyond this clock plus PROFILE_SKEW_MS (or not a UTC instant) is ignored, so
 * a peer cannot pin a profile for ever by dating it 9999.
 */
export function mergeProfiles(known: Record<string, Record<string, unknown>>, incoming: unknown, self: string, nowMs = Date.now()): void {
  if (typeof incoming !== 'object' || incoming === null) return;
  for (const [replica, profile] of Object.entries(incoming)) {
    if (replica === self || typeof profile !== 'object' || profile === null || Array.isArray(profile)) continue;
    const at = (profile as { advertised_at?: unknown }).advertised_at;
    if (typeof at !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(at)) continue;
    const atMs = Date.parse(at);
    if (!Number.isFinite(atMs) || atMs > nowMs + PROFILE_SKEW_MS) continue;
    const held = known[replica]?.advertised_at;
    if (typeof held !== 'string' || at > held) known[replica] = profile as Record<string, unknown>;
  }
}

export class MeshReplicator {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private lease: { token: number } | null = null;
  private lastPeersError: string | null = null;
  readonly holder = syncHolderId();

  constructor(private readonly options: ReplicatorOptions) {}

  /** Sleeps one interval before the first round (docs/logstream.md §8.6). */
  start(): void {
    if (this.options.intervalMs <= 0) return;
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.round().then(() => undefined, (e: unknown) => this.options.log.error({ err: e }, 'mempalace sync: round failed')).finally(() => {
        this.running = null;
        this.schedule();
      });
    }, this.options.intervalMs);
    this.timer.unref();
  }

  private leaseTtlMs(): number {
    return Math.max(3 * this.options.intervalMs, 1_000);
  }

  /** Hold the sync lease: renew ours, or take a free one. False when another process holds it. */
  private async holdLease(): Promise<boolean> {
    const locks = this.options.locks();
    if (this.lease && (await locks.renew(SYNC_LEASE_KEY, this.holder, this.lease.token, this.leaseTtlMs()))) return true;
    this.lease = await locks.acquire(SYNC_LEASE_KEY, this.holder, this.leaseTtlMs());
    return this.lease !== null;
  }

  /** The configured peers and origin keys, or null when the file cannot be read (then no peer is attempted). */
  private async readPeers(): Promise<{ peers: SyncPeer[]; trust: OriginKeys } | null> {
    try {
      const peers = await this.options.peers();
      const trust = new Map(
        Object.entries(await this.options.originKeys()).map(([replica, key]) => [replica, parsePublicKey(key, `public_key of ${replica}`)]),
      );
      this.lastPeersError = null;
      return { peers, trust };
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      // Logged once per transition, retried every round (docs/logstream.md §8.6).
      if (message !== this.lastPeersError) this.options.log.warn(`mempalace sync: ${message}`);
      this.lastPeersError = message;
      return null;
    }
  }

  /** One round against every peer due, then one publication. Returns the reports of successful pulls. */
  async round(): Promise<PullReport[]> {
    if (!(await this.holdLease())) return [];
    const logstream = this.options.logstream();
    const self = await logstream.replicaId();
    const configured = await this.readPeers();
    const peers = configured?.peers ?? null;
    const state = await logstream.readMeshState();
    // Records of peers no longer in the file are dropped; an unreadable file keeps them all.
    const records: MeshState['peers'] = peers
      ? Object.fromEntries(peers.flatMap((p) => (state.peers[p.name] ? [[p.name, state.peers[p.name]!]] : [])))
      : { ...state.peers };
    const profiles: MeshState['profiles'] = { ...state.profiles };
    const reports: PullReport[] = [];
    for (const peer of peers ?? []) {
      // A long round renews the lease per peer, so it does not expire under a slow peer.
      if (!(await this.holdLease())) return reports;
      const held = records[peer.name] ?? {};
      const retryAt = typeof held.retry_at === 'string' ? Date.parse(held.retry_at) : Number.NaN;
      if (Number.isFinite(retryAt) && Date.now() < retryAt && held.url === peerLabel(peer.url)) continue;
      try {
        const report = await pullFromPeer(logstream, this.options.transport, peer, { trust: configured!.trust, log: this.options.log });
        reports.push(report);
        mergeProfiles(profiles, report.remote_profiles, self);
        if (report.remote_profile && report.peer_replica) mergeProfiles(profiles, { [report.peer_replica]: report.remote_profile }, self);
        records[peer.name] = {
          url: report.peer_url,
          replica_id: report.peer_replica,
          reachable: true,
          last_error: null,
          last_error_at: held.last_error_at ?? null,
          last_success_at: stamp(Date.now()),
          last_pulled_events: report.pulled_events,
          last_pulled_artifacts: report.pulled_artifacts,
          remote_version_vector: report.remote_version_vector,
          profile: report.remote_profile ?? held.profile ?? null,
          consecutive_failures: 0,
          retry_at: null,
          refusals: report.refusals.slice(0, REFUSALS_REPORTED),
          capped_origins: report.capped_origins,
        };
      } catch (e) {
        const failures = (typeof held.consecutive_failures === 'number' ? held.consecutive_failures : 0) + 1;
        const message = e instanceof Error ? e.message : String(e);
        records[peer.name] = {
          url: peerLabel(peer.url),
          replica_id: held.replica_id ?? null,
          reachable: false,
          last_error: message.includes(peerLabel(peer.url)) ? message : `${peerLabel(peer.url)}: ${message}`,
          last_error_at: stamp(Date.now()),
          last_success_at: held.last_success_at ?? null,
          last_pulled_events: held.last_pulled_events ?? 0,
          last_pulled_artifacts: held.last_pulled_artifacts ?? 0,
          remote_version_vector: held.remote_version_vector ?? null,
          profile: held.profile ?? null,
          refusals: held.refusals ?? [],
          capped_origins: held.capped_origins ?? [],
          consecutive_failures: failures,
          retry_at: stamp(Date.now() + backoffMs(this.options.intervalMs, failures)),
        };
      }
    }
    const selfVector = await logstream.versionVector();
    profiles[self] = (await selfProfile(this.options.mesh, selfVector[self] ?? 0)) as NodeProfile & Record<string, unknown>;
    // Fencing: a process that lost the lease mid-round must not overwrite the new holder's estate.
    if (!this.lease) return reports;
    await this.options.locks().check(SYNC_LEASE_KEY, this.lease.token);
    await logstream.publishMeshState({ peers: records, profiles, published_at: stamp(Date.now()) });
    return reports;
  }

  /** Stop the loop, let a running round finish, give the lease up. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    if (this.lease) {
      await this.options.locks().release(SYNC_LEASE_KEY, this.holder, this.lease.token).catch(() => false);
      this.lease = null;
    }
  }
}
