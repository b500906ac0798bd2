/**
 * Temporal compatibility across the move of the job code into jobs/ (issue 25): histories that
 * the workflows recorded before the move (a mine and a dry-run sync, run by the code of the old
 * workflows/ folder and kept in fixtures/replay-histories.json) replay on today's workflow bundle
 * without a nondeterminism error, so jobs running across a worker upgrade carry on.
 */
import fs from 'node:fs/promises';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { workflowsPath } from '../../jobs/engines/temporal/worker.js';
import { WORKFLOW_TYPES } from '../../jobs/workflow-types.js';

describe('workflow histories recorded before the jobs/ move', () => {
  it('replay on the current workflow bundle', async () => {
    const histories = JSON.parse(await fs.readFile(new URL('./fixtures/replay-histories.json', import.meta.url), 'utf8')) as Record<string, unknown>;
    expect(Object.keys(histories).sort()).toEqual([WORKFLOW_TYPES.mine, WORKFLOW_TYPES.sync].sort());
    for (const [type, history] of Object.entries(histories)) {
      await expect(Worker.runReplayHistory({ workflowsPath: workflowsPath() }, history, `replay-${type}`), type).resolves.toBeUndefined();
    }
  });
});
