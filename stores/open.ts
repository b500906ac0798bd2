/**
 * Composition of the stores for the configured profile. The only place (with app/) that picks
 * adapters: everything else receives ports.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../core/config.js';
import { openNeo4jGraphStore } from './neo4j/neo4j-graph-store.js';
import { OpenSearchConnection, type OpenSearchConnectionOptions } from './opensearch/connection.js';
import { dropPalaceIndices } from './opensearch/drawer-mapping.js';
import { openOpenSearchDrawerIndex } from './opensearch/opensearch-drawer-index.js';
import { openSearchIndexMaintenance } from './opensearch/reindex-repair.js';
import { openRedisJobStore } from './redis/redis-job-store.js';
import { openRedisLocks } from './redis/redis-locks.js';
import { openRedisRegisteredSources } from './redis/redis-registered-sources.js';
import { openRedisAuditLog } from './redis/redis-audit-log.js';
import { openRedisLogstream } from './redis/logstream/redis-logstream.js';
import { RedisConnections } from './redis/connection.js';
import { RedisSourceCredentials } from './redis/redis-source-credentials.js';
import { openSqliteDrawerIndex } from './embedded/drawers/sqlite-drawer-index.js';
import { embeddedIndexMaintenance } from './embedded/drawers/derived-index-repair.js';
import { sqliteIntegrityCheck } from './embedded/integrity.js';
import { readOriginKeys, readPeersFile } from './shared/logstream/peers-file.js';
import { openSqliteGraphStore } from './embedded/sqlite-graph-store.js';
import { SqliteJobStore } from './embedded/sqlite-job-store.js';
import { openSqliteLocks } from './embedded/sqlite-locks.js';
import { SqliteRegisteredSources } from './embedded/sqlite-registered-sources.js';
import { SqliteAuditLog } from './embedded/sqlite-audit-log.js';
import { openSqliteLogstream } from './embedded/logstream/sqlite-logstream.js';
import { FileSourceCredentials } from './embedded/file-source-credentials.js';
import type { IndexMaintenance } from './ports/index-maintenance.js';
import type { PalaceStores } from './ports/palace-stores.js';

/** The palace's OpenSearch connection settings: the endpoint, the shard layout of the indices it creates and the knn search's ef. */
function openSearchOptions(config: Config): OpenSearchConnectionOptions {
  return { url: config.opensearch.url, palaceName: config.palaceName, shards: config.opensearch.shards, replicas: config.opensearch.replicas,
    efSearch: config.opensearch.efSearch };
}

/**
 * Deletes everything a palace holds: its directory (embedded), or its OpenSearch indices, Neo4j
 * nodes and Redis keys (cluster; the directory is left alone). For throwaway palaces (`mempalace
 * eval`, tests); its stores must be closed first.
 */
export async function dropPalace(config: Config): Promise<void> {
  if (config.profile === 'cluster') {
    const search = new OpenSearchConnection(openSearchOptions(config));
    await dropPalaceIndices(search).finally(() => search.close());
    const graph = await openNeo4jGraphStore(config);
    await graph.dropPalace().finally(() => graph.close());
    const redis = new RedisConnections({ url: config.redis.url, palaceName: config.palaceName });
    await redis.dropPalace().finally(() => redis.close());
    return;
  }
  await fs.rm(config.palaceDir, { recursive: true, force: true });
}

/** Maintenance of the derived drawer indexes (`mempalace repair`), opened without the stores. */
export function openIndexMaintenance(config: Config): IndexMaintenance {
  return config.profile === 'cluster'
    ? openSearchIndexMaintenance(openSearchOptions(config))
    : embeddedIndexMaintenance(config.palaceDir);
}

/** The configured mesh peers, read from the peers file at each call so an edit applies without a restart. */
function meshPeers(config: Config): Pick<PalaceStores, 'peers' | 'syncPeers' | 'originKeys'> {
  return {
    peers: async () => readPeersFile(config.sync.peersFile).map((p) => ({ name: p.name, url: p.url })),
    syncPeers: async () => readPeersFile(config.sync.peersFile),
    originKeys: async () => readOriginKeys(config.sync.peersFile),
  };
}

/** The stores of the configured profile; the job store keeps records of the caller's `Spec` and `Progress` types. */
export async function openStores<Spec = unknown, Progress = unknown>(config: Config): Promise<PalaceStores<Spec, Progress>> {
  if (config.profile === 'cluster') return openClusterStores<Spec, Progress>(config);
  const dir = config.palaceDir;
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const drawers = await openSqliteDrawerIndex(dir);
  const graph = await openSqliteGraphStore(dir);
  const logstream = await openSqliteLogstream(dir);
  const locks = await openSqliteLocks(dir);
  const jobs = new SqliteJobStore<Spec, Progress>(path.join(dir, 'jobs.sqlite3'));
  const sources = new SqliteRegisteredSources(path.join(dir, 'jobs.sqlite3'));
  const credentials = new FileSourceCredentials(dir);
  const audit = new SqliteAuditLog(path.join(dir, 'audit.sqlite3'));
  const parts = { drawers, graph, logstream, locks, jobs, sources, audit, credentials };
  return { profile: 'embedded', palace: dir, ...parts, integrityCheck: () => sqliteIntegrityCheck(dir), ...meshPeers(config),
    close: () => closeAll(Object.values(parts)) };
}

async function closeAll(stores: readonly { close(): Promise<void> }[]): Promise<void> {
  await Promise.allSettled(stores.map((s) => s.close()));
}

/**
 * The team deployment: drawers in OpenSearch, the graph in Neo4j, the logstream, leases and job
 * records in Redis. Opened together; if one store cannot open, the ones already open are closed.
 */
async function openClusterStores<Spec, Progress>(config: Config): Promise<PalaceStores<Spec, Progress>> {
  const redis = { url: config.redis.url, palaceName: config.palaceName };
  const opened: { close(): Promise<void> }[] = [];
  const track = async <T extends { close(): Promise<void> }>(p: Promise<T>): Promise<T> => {
    const store = await p;
    opened.push(store);
    return store;
  };
  try {
    const drawers = await track(openOpenSearchDrawerIndex(openSearchOptions(config)));
    const graph = await track(openNeo4jGraphStore(config));
    const logstream = await track(openRedisLogstream({ ...redis, durable: config.logstream.durable }));
    const locks = await track(openRedisLocks(redis));
    const jobs = await track(openRedisJobStore<Spec, Progress>(redis));
    const sources = await track(openRedisRegisteredSources(redis));
    const credentials = await track(Promise.resolve(new RedisSourceCredentials(redis)));
    const audit = await track(openRedisAuditLog(redis));
    return { profile: 'cluster', palace: config.palaceName, drawers, graph, logstream, locks, jobs, sources, audit, credentials, ...meshPeers(config),
      close: () => closeAll(opened) };
  } catch (e) {
    await closeAll(opened);
    throw e;
  }
}
