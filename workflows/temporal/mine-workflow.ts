/**
 * The mine job as a Temporal workflow: the shared mine orchestration with its activities proxied
 * to workers. History stays small whatever the source size: the manifest lives in the JobStore,
 * each batch is one activity (a window of them in flight, so every worker on the queue embeds at
 * once), and when the server suggests it the run lets its batches in flight finish and continues
 * as new carrying only the cursor (counters, low-water mark and the few finished batches above
 * it, the scan's manifest id), the window and the lease's fence.
 */
import { continueAsNew, workflowInfo } from '@temporalio/workflow';
import type { JobProgress } from '../../palace/jobs.js';
import type { MineActivities } from '../activity-types.js';
import type { MineOutcome } from '../mine.js';
import { mineOrchestration, mineSummary, newMineCursor } from '../mine.js';
import type { MineWorkflowInput } from './types.js';
import { JobRun } from './workflow-support.js';

export async function mineWorkflow(input: MineWorkflowInput): Promise<JobProgress> {
  const { spec, carried } = input;
  const run = new JobRun('mine', input.lockKey, input.timeouts, carried ? { progress: carriedProgress(input), ...(carried.fence ? { fence: carried.fence } : {}), cancelled: carried.cancelled } : undefined);
  if (!carried) await run.register(spec as unknown as Record<string, unknown>);
  const { work } = run.acts;
  // Batches and the finish step write drawers: they carry the current fence, re-taken if stale.
  const acts: MineActivities = {
    scanSource: (i) => work.scanSource(i),
    mineBatch: (i) => (input.writes ? run.fenced((fence) => work.mineBatch({ ...i, fence })) : work.mineBatch(i)),
    finishMine: (i) => (input.writes ? run.fenced((fence) => work.finishMine({ ...i, fence })) : work.finishMine(i)),
  };
  let outcome: MineOutcome;
  try {
    if (input.writes && !run.fence) await run.acquireLease();
    outcome = await mineOrchestration(run.jobId, spec, acts, {
      progress: (cursor) => run.report(cursor.counters, { recentErrors: cursor.recentErrors, ...(cursor.lastFile === undefined ? {} : { lastFile: cursor.lastFile }) }),
      cancelRequested: () => run.cancelRequested,
      ...(input.window === undefined ? {} : { window: input.window }),
      handOverRequested: () => workflowInfo().continueAsNewSuggested,
    }, carried?.cursor ?? newMineCursor());
  } catch (e) {
    await run.releaseLease();
    return run.fail(e);
  }
  if (outcome.status === 'handover') {
    // The lease stays held across the hand-over; the next run carries its fence.
    return continueAsNew<typeof mineWorkflow>({
      ...input,
      carried: { cursor: outcome.cursor, ...(run.fence ? { fence: run.fence } : {}), startedAt: run.progress.started_at, cancelled: run.cancelRequested },
    });
  }
  await run.releaseLease();
  const scan = outcome.cursor.scan;
  const result = {
    success: outcome.status === 'completed', mode: spec.mode, dry_run: spec.dryRun, output: mineSummary(spec, outcome),
    ...(scan?.commit ? { commit: scan.commit } : {}), ...(outcome.status === 'completed' ? { hallways: outcome.hallways } : {}),
  };
  return run.finish(outcome.status, { result });
}

/** The progress a continued run starts from: the carried counters, same job and start time. */
function carriedProgress(input: MineWorkflowInput): JobProgress {
  const { cursor, startedAt } = input.carried!;
  return {
    job_id: workflowInfo().firstExecutionRunId, kind: 'mine', lock_key: input.lockKey, state: 'running',
    started_at: startedAt, updated_at: new Date().toISOString(), rate: 0, eta_s: null,
    recent_errors: cursor.recentErrors, ...cursor.counters,
    ...(cursor.lastFile === undefined ? {} : { last_file: cursor.lastFile }),
  };
}
