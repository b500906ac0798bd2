/**
 * `mempalace reembed` as a Temporal workflow: the shared re-embed orchestration with its pages as
 * activities on any worker, each fenced by the palace's re-embed lease. History stays small: a
 * page is one activity, the cursor is three numbers, and the run continues as new when the server
 * suggests it.
 */
import { continueAsNew, workflowInfo } from '@temporalio/workflow';
import type { JobProgress } from '../job.js';
import type { ReembedActivities } from './orchestration.js';
import { reembedOrchestration, reembedStep, reembedSummary } from './orchestration.js';
import type { ReembedWorkflowInput } from '../workflow-types.js';
import { JobRun } from '../workflow-run.js';

export async function reembedWorkflow(input: ReembedWorkflowInput): Promise<JobProgress> {
  const { spec, carried } = input;
  const run = await JobRun.open(input, reembedStep);
  const { work } = run.acts;
  const acts: ReembedActivities = {
    reembedStart: (i) => work.reembedStart(i),
    reembedPage: (i) => run.fenced((fence) => work.reembedPage({ ...i, fence })),
    reembedFinish: (i) => run.fenced((fence) => work.reembedFinish({ ...i, fence })),
  };
  return run.leased(!run.fence, () =>
    reembedOrchestration(run.jobId, spec, acts, {
      progress: (cursor) => run.report(reembedStep(cursor)),
      cancelRequested: () => run.cancelRequested,
      handOverRequested: () => workflowInfo().continueAsNewSuggested,
    }, carried?.cursor), (outcome) =>
    outcome.status === 'handover'
      ? continueAsNew<typeof reembedWorkflow>({ ...input, carried: run.carry(outcome.cursor) })
      : run.finish(outcome.status, { result: { success: outcome.status === 'completed', model: spec.model, output: reembedSummary(spec, outcome) } }));
}
