/**
 * The mine job as a Temporal workflow: the shared mine orchestration with its activities proxied
 * to workers. History stays small whatever the source size: the manifest lives in the JobStore,
 * each batch is one activity (a window of them in flight, so every worker on the queue embeds at
 * once), and when the server suggests it the run lets its batches in flight finish and continues
 * as new carrying only the cursor (counters, low-water mark and the few finished batches above
 * it, the scan's manifest id), the window and the lease's fence.
 */
import { CancellationScope, continueAsNew, patched, workflowInfo } from '@temporalio/workflow';
import type { JobProgress } from '../job.js';
import type { MineActivities } from './types.js';
import { MINE_LOOKAHEAD_WINDOWS, mineOrchestration, mineResult, mineStep, newMineCursor } from './orchestration.js';
import type { MineWorkflowInput } from '../workflow-types.js';
import { JobRun } from '../workflow-run.js';

export async function mineWorkflow(input: MineWorkflowInput): Promise<JobProgress> {
  const { spec, carried } = input;
  const run = await JobRun.open(input, mineStep);
  const { work } = run.acts;
  // A cancel stops the scan and the batches in flight (their attempts stop at their signal and
  // report back); the finish step, once started, completes. Histories recorded before this
  // replay without it.
  const stoppable = new CancellationScope();
  if (patched('mine-cancel-stops-steps')) run.whenCancelled(() => stoppable.cancel());
  // Batches and the finish step write drawers: they carry the current fence, re-taken if stale.
  const acts: MineActivities = {
    scanSource: (i) => stoppable.run(() => work.scanSource(i)),
    mineBatch: (i) => stoppable.run(() => (input.writes ? run.fenced((fence) => work.mineBatch({ ...i, fence })) : work.mineBatch(i))),
    finishMine: (i) => (input.writes ? run.fenced((fence) => work.finishMine({ ...i, fence })) : work.finishMine(i)),
  };
  // Histories recorded before the look-ahead existed replay with a look-ahead of one window, so a
  // mine in flight across a worker upgrade schedules the same batches it did.
  const lookaheadWindows = patched('mine-lookahead') ? MINE_LOOKAHEAD_WINDOWS : 1;
  return run.leased(input.writes && !run.fence, () =>
    mineOrchestration(run.jobId, spec, acts, {
      progress: (cursor) => run.report(mineStep(cursor)),
      cancelRequested: () => run.cancelRequested,
      ...(input.window === undefined ? {} : { window: input.window }),
      lookaheadWindows,
      handOverRequested: () => workflowInfo().continueAsNewSuggested,
    }, carried?.cursor ?? newMineCursor()), (outcome) =>
    outcome.status === 'handover'
      ? continueAsNew<typeof mineWorkflow>({ ...input, carried: run.carry(outcome.cursor) })
      : run.finish(outcome.status, { result: mineResult(spec, outcome) }));
}
