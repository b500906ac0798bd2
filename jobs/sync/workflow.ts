/**
 * The sync job as a Temporal workflow: the shared sync orchestration (classify, then remove only
 * the provably stale drawers), the apply step fenced by the source's lease. The plan is stored by
 * the scan activity and only its id travels through history.
 */
import type { JobProgress } from '../job.js';
import type { SyncActivities } from './types.js';
import { syncOrchestration } from './orchestration.js';
import type { SyncWorkflowInput } from '../workflow-types.js';
import { JobRun } from '../workflow-run.js';

export async function syncWorkflow(input: SyncWorkflowInput): Promise<JobProgress> {
  const run = await JobRun.open(input);
  const { work } = run.acts;
  const acts: SyncActivities = {
    syncScan: (i) => work.syncScan(i),
    syncApply: (i) => run.fenced((fence) => work.syncApply({ ...i, fence })),
  };
  return run.leased(input.writes, () => syncOrchestration(run.jobId, input.spec, acts),
    (report) => run.finish('completed', { result: { success: true, ...report } }));
}
