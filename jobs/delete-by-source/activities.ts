/**
 * delete_by_source steps: counts and a sample for the dry run, then one delete pushed down to the
 * store as an equality filter on `source_file` (no client-side id list, no limit).
 */
import type { DeleteBySourceSpec, Fence } from '../job.js';
import { assertStoredSourceAllowed, sourcePolicy } from '../../palace/sources/sources.js';
import type { ActivityDeps } from '../activity-deps.js';
import { checkFence } from '../fence.js';

/** The caller's roots bound what it may delete, checked again where the job runs. */
function assertAllowed(deps: ActivityDeps, spec: DeleteBySourceSpec): Promise<void> {
  return assertStoredSourceAllowed('source_file', spec.sourceFile, sourcePolicy(deps.config, { carried: spec.sourceBounds }));
}

export async function deleteBySourceCount(deps: ActivityDeps, input: { spec: DeleteBySourceSpec }) {
  await assertAllowed(deps, input.spec);
  const filter = { sourceFile: input.spec.sourceFile };
  const [rows, logical, pairs] = await Promise.all([
    deps.stores.drawers.count(filter),
    deps.stores.drawers.list(filter, 0, 1),
    deps.stores.drawers.taxonomy(filter),
  ]);
  return { match_count: logical.total, match_rows: rows, sample: pairs.slice(0, 5).map((p) => ({ wing: p.wing, room: p.room })) };
}

export async function deleteBySourceApply(deps: ActivityDeps, input: { spec: DeleteBySourceSpec; fence?: Fence }) {
  await assertAllowed(deps, input.spec);
  if (input.fence) await checkFence(deps.stores.locks, input.fence);
  const sourceFile = input.spec.sourceFile;
  const wings = new Set((await deps.stores.drawers.taxonomy({ sourceFile })).map((p) => p.wing));
  const deleted = await deps.stores.drawers.deleteWhere({ sourceFile });
  // Forget the file's mining state too, so a later mine files it again.
  for (const wing of wings) await deps.stores.drawers.deleteFileStates(wing, [sourceFile]);
  return { deleted_rows: deleted };
}
