/**
 * Composition of the stores for the configured profile. The only place (with cli/) that picks
 * adapters: everything else receives ports.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../core/config.js';
import { PalaceError } from '../core/errors.js';
import { openSqliteDrawerIndex } from './embedded/sqlite-drawer-index.js';
import { sqliteIntegrityCheck } from './embedded/integrity.js';
import { readPeersFile } from './embedded/logstream-peers.js';
import { openSqliteGraphStore } from './embedded/sqlite-graph-store.js';
import { SqliteJobStore } from './embedded/sqlite-job-store.js';
import { openSqliteLocks } from './embedded/sqlite-locks.js';
import { openSqliteLogstream } from './embedded/sqlite-logstream.js';
import type { DrawerIndex, GraphStore, JobStore, Locks, Logstream } from './ports.js';

export interface PalaceStores {
  profile: Config['profile'];
  /** Palace directory (embedded) or palace name (cluster), for messages and lock keys. */
  palace: string;
  drawers: DrawerIndex;
  graph: GraphStore;
  logstream: Logstream;
  locks: Locks;
  jobs: JobStore;
  /** Read-only integrity check of the palace's database files, where the stores have one. */
  integrityCheck?: () => Promise<{ sqlite_path: string; errors: string[] }>;
  /** Configured mesh peers (name and url only). */
  peers(): Promise<{ name: string; url: string }[]>;
  close(): Promise<void>;
}

/** Whether an embedded palace exists at the configured directory. */
export async function palaceExists(config: Config): Promise<boolean> {
  if (config.profile !== 'embedded') return true;
  return fs.stat(path.join(config.palaceDir, 'drawers.sqlite3')).then(() => true, () => false);
}

export async function openStores(config: Config): Promise<PalaceStores> {
  if (config.profile === 'cluster') {
    throw new PalaceError('internal', 'the cluster profile stores are not available in this build', { rule: 'profile' });
  }
  const dir = config.palaceDir;
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const drawers = await openSqliteDrawerIndex(dir);
  const graph = await openSqliteGraphStore(dir);
  const logstream = await openSqliteLogstream(dir);
  const locks = await openSqliteLocks(dir);
  const jobs = new SqliteJobStore(path.join(dir, 'jobs.sqlite3'));
  return {
    profile: 'embedded',
    palace: dir,
    drawers, graph, logstream, locks, jobs,
    integrityCheck: () => sqliteIntegrityCheck(dir),
    peers: async () => readPeersFile(dir).map((p) => ({ name: p.name, url: p.url })),
    async close() {
      await Promise.allSettled([drawers.close(), graph.close(), logstream.close(), locks.close(), jobs.close()]);
    },
  };
}
