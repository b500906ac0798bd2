/**
 * `mempalace reembed` as a Temporal workflow: the shared re-embed orchestration with its pages as
 * activities on any worker, each fenced by the palace's re-embed lease. History stays small: a
 * page is one activity, the cursor is three numbers, and the run continues as new when the server
 * suggests it.
 */
import type { JobProgress } from '../job.js';
import type { ReembedActivities } from './orchestration.js';
import { reembedOrchestration, reembedStep, reembedSummary } from './orchestration.js';
import type { ReembedWorkflowInput } from '../workflow-types.js';
import { cursorWorkflow } from '../workflow-run.js';

export async function reembedWorkflow(input: ReembedWorkflowInput): Promise<JobProgress> {
  const { spec } = input;
  return cursorWorkflow(input, reembedStep, (run, hooks, start) => {
    const { work } = run.acts;
    const acts: ReembedActivities = {
      reembedStart: (i) => work.reembedStart(i),
      reembedPage: (i) => run.fenced((fence) => work.reembedPage({ ...i, fence })),
      reembedFinish: (i) => run.fenced((fence) => work.reembedFinish({ ...i, fence })),
    };
    return reembedOrchestration(run.jobId, spec, acts, hooks, start);
  }, (outcome) => ({ success: outcome.status === 'completed', model: spec.model, output: reembedSummary(spec, outcome) }));
}
