/**
 * Temporal mines that survive their workers: a 2,000-file mine whose worker process is killed
 * with SIGKILL mid-run, and whose next worker is stopped with SIGTERM mid-run, ends (on a third
 * worker) with exactly the drawers of a clean run; and the same mine on a dev server told to
 * suggest continue-as-new after 200 history events completes in several small runs.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { useCleanMineSource } from '../helpers/clean-mine.js';
import { waitForFilesSeen, withTemporalRig } from '../helpers/temporal-rig.js';
import { drawerIds, mineSpec } from '../integration/temporal-harness.js';
import { exited } from '../helpers/processes.js';

const FILES = 2_000;

const fx = useCleanMineSource({ prefix: 'mempalace-temporal-fault-', wing: 'big', files: FILES, seed: 17 });
beforeAll(() => {
  expect(fx.expected).toHaveLength(FILES);
});

describe('Temporal mine and its workers', () => {
  it('a worker killed with SIGKILL, then one stopped with SIGTERM, mid-run: a third finishes with the drawers of a clean run', async () => {
    await withTemporalRig({ dir: fx.tmp, label: 'crash' }, async ({ engine, stores, spawnWorker }) => {
      const first = await spawnWorker();
      const started = await engine.start(mineSpec(fx.source, 'big'));
      const seenAtKill = await waitForFilesSeen(engine, started.job_id, 256);
      first.kill('SIGKILL');
      await exited(first);
      expect(first.signalCode).toBe('SIGKILL');
      const partial = await stores.drawers.count({ wing: 'big' });
      expect(partial).toBeGreaterThanOrEqual(seenAtKill);
      expect(partial).toBeLessThan(FILES);
      expect((await engine.progress(started.job_id)).state).toBe('running');

      const second = await spawnWorker({ WORKER_SHUTDOWN_GRACE_MS: '3000' });
      let stopped = '';
      second.stdout!.on('data', (c: Buffer) => (stopped += c.toString()));
      await waitForFilesSeen(engine, started.job_id, 1_000);
      second.kill('SIGTERM');
      await exited(second);
      // A graceful stop: it finished or handed back its batch and exited on its own.
      expect(second.exitCode).toBe(0);
      expect(stopped).toContain('worker stopped');
      expect((await engine.progress(started.job_id)).state).toBe('running');

      await spawnWorker();
      const done = await engine.wait(started.job_id, 600_000);
      expect(done.state).toBe('completed');
      expect(done.files_seen).toBe(FILES);
      expect(done.files_total).toBe(FILES);
      expect(await stores.drawers.count({ wing: 'big' })).toBe(FILES);
      expect(await drawerIds(stores.drawers, 'big')).toEqual(fx.expected);
      expect(await stores.locks.holder(done.lock_key)).toBeNull();
    });
  });

  it('with continue-as-new suggested after 200 events, the mine runs as a chain of small histories and completes', async () => {
    const ownDevServer = ['limit.historyCount.suggestContinueAsNew=200'];
    await withTemporalRig({ dir: fx.tmp, label: 'can', ownDevServer }, async ({ engine, stores, runWorker }) => {
      await runWorker(fx.embedder);
      const started = await engine.start(mineSpec(fx.source, 'big'));
      const done = await engine.wait(started.job_id, 600_000);
      expect(done.state).toBe('completed');
      expect(done.files_seen).toBe(FILES);
      expect(await drawerIds(stores.drawers, 'big')).toEqual(fx.expected);

      const client = engine.temporalClient;
      const runs: { runId: string; status: string; events: number }[] = [];
      for await (const info of client.workflow.list({ query: `WorkflowId = "${done.lock_key}"` })) {
        const history = await client.workflow.getHandle(done.lock_key, info.runId).fetchHistory();
        runs.push({ runId: info.runId, status: info.status.name, events: history.events?.length ?? 0 });
      }
      const total = runs.reduce((a, r) => a + r.events, 0);
      console.log(
        `continue-as-new: ${runs.length} runs, history events per run ${runs.map((r) => r.events).join(', ')}, ${
          Math.round((total / FILES) * 1000)
        } events per 1,000 files`,
      );
      // 2,000 files are 32 batches: one history would exceed the threshold several times over.
      expect(runs.length).toBeGreaterThanOrEqual(2);
      expect(runs.filter((r) => r.status === 'CONTINUED_AS_NEW')).toHaveLength(runs.length - 1);
      expect(runs.some((r) => r.runId === done.job_id)).toBe(true);
      // A run hands over at the first batch boundary after the suggestion: one batch's events past 200.
      for (const r of runs) expect(r.events).toBeLessThanOrEqual(230);
    });
  });
});
