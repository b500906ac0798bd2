/**
 * After the last batch of a mine (docs/palace-behaviour.md §4.9): rebuild the wing's hallways from the
 * entities its drawers carry, then its entity tunnels, and after a projects or extract mine its
 * topic tunnels from the registry's `topics_by_wing` (§11.4). A failure here is a warning, never
 * a failed mine: the drawers are already filed.
 */
import { buildHallwaysForWing } from '../../palace/graph/hallways.js';
import { buildEntityTunnels, buildTopicTunnels } from '../../palace/graph/tunnels.js';
import type { Fence, MineSpec } from '../job.js';
import type { ScanResult } from './types.js';
import type { ActivityDeps } from '../activity-deps.js';
import { checkFence } from '../fence.js';
import { readEntityRegistry } from '../../palace/sources/entity-registry.js';

export async function finishMine(deps: ActivityDeps,
  input: { jobId: string; spec: MineSpec; scan: ScanResult; fence?: Fence }): Promise<{ hallways: number; warnings: string[] }> {
  const warnings: string[] = [];
  const ctx = { graph: deps.stores.graph, drawers: deps.stores.drawers };
  let hallways = 0;
  try {
    if (input.fence) await checkFence(deps.stores.locks, input.fence);
    hallways = (await buildHallwaysForWing(ctx, input.scan.wing)).length;
    await buildEntityTunnels(ctx, input.scan.wing);
    if (input.spec.mode !== 'convos') {
      const topics = readEntityRegistry(deps.config.entityRegistryFile)?.topics_by_wing ?? {};
      await buildTopicTunnels(ctx, input.scan.wing, topics, deps.config.topicTunnelMinCount);
    }
  } catch (e) {
    warnings.push(`hallways/tunnels for wing ${input.scan.wing} not rebuilt: ${e instanceof Error ? e.message : String(e)}`);
  }
  return { hallways, warnings };
}
