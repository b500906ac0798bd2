/**
 * A revert as a Temporal workflow: the shared revert orchestration with its batches as activities
 * on any worker, each fenced by the lease of the agent's reverts. History stays small: the plan
 * stays in the audit trail, a batch is one activity, the cursor is a few numbers, and the run
 * continues as new when the server suggests it.
 */
import { continueAsNew, workflowInfo } from '@temporalio/workflow';
import type { JobProgress } from '../job.js';
import type { RevertActivities } from './orchestration.js';
import { revertOrchestration, revertResult, revertStep } from './orchestration.js';
import type { RevertWorkflowInput } from '../workflow-types.js';
import { JobRun } from '../workflow-run.js';

export async function revertWorkflow(input: RevertWorkflowInput): Promise<JobProgress> {
  const { spec, carried } = input;
  const run = await JobRun.open(input, revertStep);
  const { work } = run.acts;
  const acts: RevertActivities = {
    revertStart: (i) => work.revertStart(i),
    revertBatch: (i) => run.fenced((fence) => work.revertBatch({ ...i, fence })),
    revertFinish: (i) => run.fenced((fence) => work.revertFinish({ ...i, fence })),
  };
  return run.leased(!run.fence, () =>
    revertOrchestration(run.jobId, spec, acts, {
      progress: (cursor) => run.report(revertStep(cursor)),
      cancelRequested: () => run.cancelRequested,
      handOverRequested: () => workflowInfo().continueAsNewSuggested,
    }, carried?.cursor), (outcome) =>
    outcome.status === 'handover'
      ? continueAsNew<typeof revertWorkflow>({ ...input, carried: run.carry(outcome.cursor) })
      : run.finish(outcome.status, { result: revertResult(spec, outcome) }));
}
