/**
 * Temporal mines with a window of batches in flight across several workers: with two worker
 * processes polling, the mine's window comes from their activity slots and both run batches at
 * once; one killed with SIGKILL midway, the mine completes on the other with exactly the drawer
 * ids of a clean local run and exact counts. Cancel stops within the window. With continue-as-new
 * suggested after 100 history events, a windowed mine runs as a chain of small histories and
 * still ends with the clean run's drawers and counts. Kills only worker processes this file
 * starts; the continue-as-new case runs its own dev server, never the shared one.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { beforeAll, describe, expect, it } from 'vitest';
import type { JobProgress } from '../../jobs/job.js';
import { MINE_BATCH_FILES } from '../../jobs/mine/orchestration.js';
import type { MineWorkflowInput } from '../../jobs/workflow-types.js';
import { useCleanMineSource } from '../helpers/clean-mine.js';
import { waitForFilesSeen, withTemporalRig } from '../helpers/temporal-rig.js';
import { drawerIds, mineSpec } from '../integration/temporal-harness.js';
import { exited } from '../helpers/processes.js';

const FILES = 20 * MINE_BATCH_FILES;

const fx = useCleanMineSource({ prefix: 'mempalace-temporal-window-', wing: 'win', files: FILES, seed: 29,
  cleanEnv: { MEMPALACE_MINE_PARALLEL_BATCHES: '1' } });
beforeAll(() => {
  expect(fx.expected).toHaveLength(FILES);
});

type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];

const seconds = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(t?.seconds ?? 0) + (t?.nanos ?? 0) / 1e9;

/**
 * The mineBatch activities of a history: most scheduled and not yet closed (the window in
 * flight), most executing at once by their start and close times, and the workers that ran them.
 */
function batchConcurrency(events: HistoryEvent[]): { maxScheduled: number; maxExecuting: number; identities: Set<string> } {
  const batches = new Set<string>();
  const startedAt = new Map<string, number>();
  const intervals: [number, number][] = [];
  const identities = new Set<string>();
  let open = 0;
  let maxScheduled = 0;
  for (const e of events) {
    if (e.activityTaskScheduledEventAttributes?.activityType?.name === 'mineBatch') {
      batches.add(String(e.eventId));
      maxScheduled = Math.max(maxScheduled, ++open);
    }
    const started = e.activityTaskStartedEventAttributes;
    if (started && batches.has(String(started.scheduledEventId))) {
      // Temporal writes the started event when the attempt closes, stamped with its real start.
      startedAt.set(String(started.scheduledEventId), seconds(e.eventTime));
      identities.add(started.identity ?? '');
    }
    const closed = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes;
    if (closed && batches.has(String(closed.scheduledEventId))) {
      open--;
      const from = startedAt.get(String(closed.scheduledEventId));
      if (from !== undefined) intervals.push([from, seconds(e.eventTime)]);
    }
  }
  const maxExecuting = Math.max(0, ...intervals.map(([from]) => intervals.filter(([a, b]) => a <= from && from < b).length));
  return { maxScheduled, maxExecuting, identities };
}

function windowOf(events: HistoryEvent[]): number | undefined {
  const payload = events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
  return payload ? (JSON.parse(Buffer.from(payload).toString('utf8')) as MineWorkflowInput).window : undefined;
}

function expectExact(done: JobProgress): void {
  expect(done).toMatchObject({ state: 'completed', files_total: FILES, files_seen: FILES, files_mined: FILES, files_skipped: 0, drawers_written: FILES,
    errors: 0 });
}

describe('Temporal mine with a window of batches', () => {
  it('two workers run batches at once; one killed with SIGKILL midway, the other finishes with the clean drawers and exact counts', async () => {
    await withTemporalRig({ dir: fx.tmp, label: 'crash' }, async ({ engine, stores, spawnWorker }) => {
      const a = await spawnWorker({ WORKER_MAX_ACTIVITIES: '2' });
      await spawnWorker({ WORKER_MAX_ACTIVITIES: '2' });
      // Both workers poll before the start, so the default window counts both: 2 × 2 slots.
      await new Promise((r) => setTimeout(r, 3_000));
      const started = await engine.start(mineSpec(fx.source, 'win'));
      await waitForFilesSeen(engine, started.job_id, 6 * MINE_BATCH_FILES);
      a.kill('SIGKILL');
      await exited(a);
      expect(a.signalCode).toBe('SIGKILL');
      expect((await engine.progress(started.job_id)).state).toBe('running');

      const done = await engine.wait(started.job_id, 600_000);
      expectExact(done);
      expect(await drawerIds(stores.drawers, 'win')).toEqual(fx.expected);
      expect(await stores.locks.holder(done.lock_key)).toBeNull();
      const history = (await engine.temporalClient.workflow.getHandle(done.lock_key, done.job_id).fetchHistory()).events ?? [];
      expect(windowOf(history)).toBeGreaterThanOrEqual(4);
      const { maxScheduled, maxExecuting, identities } = batchConcurrency(history);
      expect(maxScheduled).toBeGreaterThanOrEqual(4);
      expect(maxExecuting).toBeGreaterThanOrEqual(2);
      expect(identities.size).toBe(2);
    });
  });

  it('cancel stops within the window and releases the lease', async () => {
    const window = 4;
    await withTemporalRig({ dir: fx.tmp, label: 'cancel', mineWindow: window }, async ({ engine, stores, runWorker }) => {
      await runWorker(fx.embedder, { maxConcurrentActivities: window });
      const started = await engine.start(mineSpec(fx.source, 'cancel'));
      const seen = await waitForFilesSeen(engine, started.job_id, MINE_BATCH_FILES);
      const cancelled = await engine.cancel(started.job_id);
      expect(cancelled.state).toBe('cancelled');
      expect(cancelled.files_seen).toBeLessThan(FILES);
      expect(cancelled.files_seen - seen).toBeLessThanOrEqual(window * MINE_BATCH_FILES);
      expect(await stores.drawers.count({ wing: 'cancel' })).toBe(cancelled.files_mined);
      expect(await stores.locks.holder(cancelled.lock_key)).toBeNull();
    });
  });

  it('with continue-as-new suggested after 100 events, a windowed mine hands over between runs and completes exactly', async () => {
    const window = 4;
    const ownDevServer = ['limit.historyCount.suggestContinueAsNew=100'];
    await withTemporalRig({ dir: fx.tmp, label: 'can', mineWindow: window, ownDevServer }, async ({ engine, stores, runWorker }) => {
      await runWorker(fx.embedder, { maxConcurrentActivities: window });
      const started = await engine.start(mineSpec(fx.source, 'win'));
      const done = await engine.wait(started.job_id, 600_000);
      expectExact(done);
      expect(await drawerIds(stores.drawers, 'win')).toEqual(fx.expected);
      const client = engine.temporalClient;
      const runs: { status: string; events: HistoryEvent[] }[] = [];
      for await (const info of client.workflow.list({ query: `WorkflowId = "${done.lock_key}"` })) {
        runs.push({ status: info.status.name, events: (await client.workflow.getHandle(done.lock_key, info.runId).fetchHistory()).events ?? [] });
      }
      console.log(`windowed continue-as-new: ${runs.length} runs, history events per run ${runs.map((r) => r.events.length).join(', ')}`);
      expect(runs.length).toBeGreaterThanOrEqual(2);
      expect(runs.filter((r) => r.status === 'CONTINUED_AS_NEW')).toHaveLength(runs.length - 1);
      for (const r of runs) {
        expect(windowOf(r.events)).toBe(window);
        // A run hands over once its window has drained: at most a window of batches past 100.
        expect(r.events.length).toBeLessThanOrEqual(100 + window * 10);
      }
      expect(Math.max(...runs.map((r) => batchConcurrency(r.events).maxScheduled))).toBe(window);
    });
  });
});
