/**
 * A revert as a Temporal workflow: the shared revert orchestration with its batches as activities
 * on any worker, each fenced by the lease of the agent's reverts. History stays small: the plan
 * stays in the audit trail, a batch is one activity, the cursor is a few numbers, and the run
 * continues as new when the server suggests it.
 */
import type { JobProgress } from '../job.js';
import type { RevertActivities } from './orchestration.js';
import { revertOrchestration, revertResult, revertStep } from './orchestration.js';
import type { RevertWorkflowInput } from '../workflow-types.js';
import { cursorWorkflow } from '../workflow-run.js';

export async function revertWorkflow(input: RevertWorkflowInput): Promise<JobProgress> {
  const { spec } = input;
  return cursorWorkflow(input, revertStep, (run, hooks, start) => {
    const { work } = run.acts;
    const acts: RevertActivities = {
      revertStart: (i) => work.revertStart(i),
      revertBatch: (i) => run.fenced((fence) => work.revertBatch({ ...i, fence })),
      revertFinish: (i) => run.fenced((fence) => work.revertFinish({ ...i, fence })),
    };
    return revertOrchestration(run.jobId, spec, acts, hooks, start);
  }, (outcome) => revertResult(spec, outcome));
}
