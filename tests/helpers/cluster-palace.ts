/**
 * Throwaway cluster palaces for tests: a config under a random palace name on the running
 * engines, and a cleanup that deletes everything of that palace (OpenSearch indices, Neo4j
 * nodes, Redis keys).
 */
import { randomBytes } from 'node:crypto';
import type { Config } from '../../core/config.js';
import { loadConfig } from '../../core/config.js';
import { openNeo4jGraphStore } from '../../stores/neo4j/neo4j-graph-store.js';
import { OpenSearchConnection } from '../../stores/opensearch/connection.js';
import { dropPalaceIndices } from '../../stores/opensearch/drawer-mapping.js';
import { RedisConnections } from '../../stores/redis/connection.js';

export function clusterConfig(prefix: string, env: Record<string, string | undefined> = {}): Config {
  return loadConfig({ ...process.env, ...env, MEMPALACE_PROFILE: 'cluster', MEMPALACE_PALACE_NAME: `${prefix}-${randomBytes(5).toString('hex')}` });
}

export async function dropClusterPalace(config: Config): Promise<void> {
  const os = new OpenSearchConnection({ url: config.opensearch.url, palaceName: config.palaceName });
  await dropPalaceIndices(os).finally(() => os.close());
  const graph = await openNeo4jGraphStore(config);
  await graph.dropPalace().finally(() => graph.close());
  const redis = new RedisConnections({ url: config.redis.url, palaceName: config.palaceName });
  await redis.dropPalace().finally(() => redis.close());
}
