/**
 * Throwaway cluster palaces for tests: a config under a random palace name on the running
 * engines, and a cleanup that deletes everything of that palace (OpenSearch indices, Neo4j
 * nodes, Redis keys).
 */
import { randomBytes } from 'node:crypto';
import type { Config } from '../../core/config.js';
import { loadConfig } from '../../app/config.js';
export { dropPalace as dropClusterPalace } from '../../stores/open.js';

export function clusterConfig(prefix: string, env: Record<string, string | undefined> = {}): Config {
  return loadConfig({ ...process.env, ...env, MEMPALACE_PROFILE: 'cluster', MEMPALACE_PALACE_NAME: `${prefix}-${randomBytes(5).toString('hex')}` });
}
