/**
 * delete_by_source as a Temporal workflow: counts and a sample on a dry run, otherwise one
 * pushed-down delete fenced by the source's lease (docs/palace-behaviour.md §13.1).
 */
import type { JobProgress } from '../job.js';
import type { DeleteBySourceActivities } from './types.js';
import { deleteBySourceOrchestration } from './orchestration.js';
import type { DeleteBySourceWorkflowInput } from '../workflow-types.js';
import { JobRun } from '../workflow-run.js';

export async function deleteBySourceWorkflow(input: DeleteBySourceWorkflowInput): Promise<JobProgress> {
  const run = await JobRun.open(input);
  const { work } = run.acts;
  const acts: DeleteBySourceActivities = {
    deleteBySourceCount: (i) => work.deleteBySourceCount(i),
    deleteBySourceApply: (i) => run.fenced((fence) => work.deleteBySourceApply({ ...i, fence })),
  };
  return run.leased(input.writes, () => deleteBySourceOrchestration(input.spec, acts), (result) => run.finish('completed', { result }));
}
