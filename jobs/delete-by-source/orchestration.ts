/**
 * delete_by_source orchestration (docs/palace-behaviour.md §13.1): count and sample on a dry run,
 * otherwise one pushed-down delete of every drawer with that exact `source_file`.
 */
import type { DeleteBySourceSpec, Fence } from '../job.js';
import type { DeleteBySourceActivities } from './types.js';

export async function deleteBySourceOrchestration(spec: DeleteBySourceSpec, acts: DeleteBySourceActivities, fence?: Fence): Promise<Record<string, unknown>> {
  const counts = await acts.deleteBySourceCount({ spec });
  if (spec.dryRun) {
    const hint = counts.match_count === 0
      ? 'Nothing matches this source_file; nothing would be deleted.'
      : `Dry run: nothing was deleted. ${counts.match_count} drawers (${counts.match_rows} rows) would be deleted; pass dry_run=false to delete them.`;
    return { success: true, dry_run: true, source_file: spec.sourceFile, ...counts, closet_match_count: 0, hint };
  }
  if (counts.match_rows === 0) return { success: true, dry_run: false, source_file: spec.sourceFile, deleted: 0 };
  const { deleted_rows } = await acts.deleteBySourceApply({ spec, ...(fence ? { fence } : {}) });
  return { success: true, dry_run: false, source_file: spec.sourceFile, deleted: counts.match_count, deleted_rows, closets_deleted: 0 };
}
