/**
 * The sync job as a Temporal workflow: the shared sync orchestration (classify, then remove only
 * the provably stale drawers), the apply step fenced by the source's lease. The plan is stored by
 * the scan activity and only its id travels through history.
 */
import type { JobProgress } from '../job.js';
import type { SyncActivities, SyncReport } from './types.js';
import { syncOrchestration } from './orchestration.js';
import type { SyncWorkflowInput } from '../workflow-types.js';
import { JobRun } from '../workflow-run.js';

export async function syncWorkflow(input: SyncWorkflowInput): Promise<JobProgress> {
  const run = new JobRun(input.spec, input.lockKey, input.timeouts);
  await run.register(input.spec);
  const { work } = run.acts;
  const acts: SyncActivities = {
    syncScan: (i) => work.syncScan(i),
    syncApply: (i) => run.fenced((fence) => work.syncApply({ ...i, fence })),
  };
  let report: SyncReport;
  try {
    if (input.writes) await run.acquireLease();
    report = await syncOrchestration(run.jobId, input.spec, acts);
  } catch (e) {
    await run.releaseLease();
    return run.fail(e);
  }
  await run.releaseLease();
  return run.finish('completed', { result: { success: true, ...report } });
}
