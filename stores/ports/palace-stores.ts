/**
 * The set of opened stores of one palace, as every layer receives it: one port per concern plus
 * the palace's name, its integrity check and its configured mesh peers. stores/open.ts builds
 * it for the configured profile.
 */
import type { Config } from '../../core/config.js';
import type { AuditLog } from './audit-log.js';
import type { DrawerBulk } from './drawers/drawer-bulk.js';
import type { DrawerIndex } from './drawers/drawer-index.js';
import type { FileStateStore } from './drawers/file-states.js';
import type { PalaceModelStore } from './drawers/palace-model.js';
import type { GraphStore } from './graph-store.js';
import type { JobStore } from './job-store.js';
import type { Locks } from './locks.js';
import type { Logstream } from './logstream/local-log.js';
import type { LogstreamReplication } from './logstream/replication.js';
import type { RegisteredSources } from './registered-sources.js';
import type { SourceCredentials } from './source-credentials.js';

/** The drawer store as opened: one store implementing the drawer index, file state, model record and bulk ports. */
export type DrawerStore = DrawerIndex & FileStateStore & PalaceModelStore & DrawerBulk;

/** The logstream as opened: one store implementing the local log and mesh replication ports. */
export type LogstreamStore = Logstream & LogstreamReplication;

/** A configured mesh peer; the token is for the sync transport only. */
export interface PeerConfig {
  name: string;
  url: string;
  token?: string;
  /** The peer's replica id and Ed25519 public key (`ed25519:…`), when the file pins them. */
  replica_id?: string;
  public_key?: string;
}

/** `Spec` and `Progress`: the types of the job records (stores/ports/job-engine.ts names them for the runtime). */
export interface PalaceStores<Spec = unknown, Progress = unknown> {
  profile: Config['profile'];
  /** Palace directory (embedded) or palace name (cluster), for messages and lock keys. */
  palace: string;
  drawers: DrawerStore;
  graph: GraphStore;
  logstream: LogstreamStore;
  locks: Locks;
  jobs: JobStore<Spec, Progress>;
  /** The repositories and directories the palace follows. */
  sources: RegisteredSources;
  /** The hash-chained trail of every write made for a caller (issue 28). */
  audit: AuditLog;
  /** Secrets split off source URLs; read by git at clone/fetch time only. */
  credentials: SourceCredentials;
  /** Read-only integrity check of the palace's database files, where the stores have one. */
  integrityCheck?: () => Promise<{ sqlite_path: string; errors: string[] }>;
  /** Configured mesh peers (name and url only). */
  peers(): Promise<{ name: string; url: string }[]>;
  /** Configured mesh peers with their tokens, for the sync transport only. */
  syncPeers(): Promise<PeerConfig[]>;
  /** Public keys (`ed25519:…`) of the origins whose records this replica accepts, by replica id, from the peers file. */
  originKeys(): Promise<Record<string, string>>;
  close(): Promise<void>;
}
