/**
 * Sync orchestration: classify every source in scope (dry run stops there, and so does an apply
 * the sync guard stops without `force`), then remove only the provably stale drawers
 * (docs/palace-behaviour.md §12). The plan is stored by the scan activity and
 * referenced by id, so nothing large travels through the orchestration.
 */
import type { Fence, SyncSpec } from '../job.js';
import type { SyncActivities, SyncReport } from './types.js';

export async function syncOrchestration(jobId: string, spec: SyncSpec, acts: SyncActivities, fence?: Fence): Promise<SyncReport> {
  const { planId, report } = await acts.syncScan({ jobId, spec });
  if (!spec.apply) return { ...report, dry_run: true, removed_drawers: 0, removed_closets: 0 };
  // The guard found a root that is not what was mined, or a mass deletion: nothing is deleted unless forced.
  if (report.guard.needs_force && !report.guard.forced)
    return { ...report, dry_run: true, removed_drawers: 0, removed_closets: 0, guard: { ...report.guard, stopped: true } };
  const { removed } = await acts.syncApply({ jobId, spec, planId, ...(fence ? { fence } : {}) });
  return { ...report, dry_run: false, removed_drawers: removed };
}
