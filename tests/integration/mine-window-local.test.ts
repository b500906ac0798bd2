/**
 * The in-process runner with several mine batches in flight: a runner process killed with
 * SIGKILL while three batches run resumes (in another process) without redoing a batch it
 * recorded as finished and without skipping one, ending with exactly the drawer ids of a clean
 * run and exact counts; cancel stops within the window.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../palace/runtime.js';
import { openRuntime } from '../../app/runtime.js';
import { loadConfig } from '../../app/config.js';
import type { MineCursor } from '../../jobs/mine/orchestration.js';
import { MINE_BATCH_FILES, MINE_LOOKAHEAD_WINDOWS } from '../../jobs/mine/orchestration.js';
import { useCleanMineSource } from '../helpers/clean-mine.js';
import { drawerIds, mineSpec } from './temporal-harness.js';

const FILES = 12 * MINE_BATCH_FILES;
const WINDOW = 3;

const fx = useCleanMineSource({ prefix: 'mempalace-window-', wing: 'win', files: FILES, seed: 23, // The clean run, one batch at a time.
  cleanEnv: { MEMPALACE_JOB_LEASE_MS: '4000', MEMPALACE_MINE_PARALLEL_BATCHES: '1' } });
beforeAll(() => {
  expect(fx.expected).toHaveLength(FILES);
});

function runtimeAt(palace: string, window = WINDOW): Promise<Runtime> {
  return openRuntime(
    loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: palace, MEMPALACE_JOB_LEASE_MS: '4000',
      MEMPALACE_MINE_PARALLEL_BATCHES: String(window) }),
    { embedder: fx.embedder },
  );
}

describe('local runner with a window of batches', () => {
  it('killed with SIGKILL with batches in flight, resumes to the drawers and counts of a clean run', async () => {
    const palace = path.join(fx.tmp, 'palace-crash');
    const child = spawn(process.execPath, ['--import', 'tsx', 'tests/fixtures/mine-child.ts', palace, fx.source, 'win'], {
      env: { ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_JOB_LEASE_MS: '4000', MEMPALACE_MINE_PARALLEL_BATCHES: String(WINDOW) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const last = [...out.matchAll(/progress (\d+) (\d+)/g)].at(-1);
        if (last && Number(last[1]) >= 4 * MINE_BATCH_FILES && Number(last[1]) < FILES && child.exitCode === null) {
          child.kill('SIGKILL');
          resolve();
        }
      });
      child.once('exit', () => resolve());
      child.once('error', reject);
    });
    await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(undefined) : child.once('exit', r)));
    expect(child.signalCode).toBe('SIGKILL');

    const rt = await runtimeAt(palace);
    try {
      const stale = (await rt.jobs.list(5)).find((j) => j.state === 'running');
      expect(stale).toBeDefined();
      const record = await rt.stores.jobs.get(stale!.job_id);
      const cursor = record!.cursor as MineCursor;
      expect(cursor.offset).toBeLessThan(FILES);
      expect((cursor.doneAbove ?? []).length).toBeLessThan(WINDOW * MINE_LOOKAHEAD_WINDOWS);
      const before = await drawerIds(rt.stores.drawers, 'win');
      expect(before.length).toBeGreaterThanOrEqual(cursor.counters.files_seen);
      expect(before.length).toBeLessThan(FILES);

      await new Promise((r) => setTimeout(r, 4500)); // the dead runner's lease expires
      // The spec tests/fixtures/mine-child.ts started.
      const resumed = await rt.jobs.start(mineSpec(fx.source, 'win', { agent: 'crash-test' }));
      expect(resumed.job_id).toBe(stale!.job_id);
      const done = await rt.jobs.wait(resumed.job_id, 600_000);
      expect(done.state).toBe('completed');
      expect(await drawerIds(rt.stores.drawers, 'win')).toEqual(fx.expected);
      // Exact: every file counted once, as mined, even those of batches redone after the kill.
      expect(done).toMatchObject({ files_total: FILES, files_seen: FILES, files_mined: FILES, files_skipped: 0, drawers_written: FILES, errors: 0 });
    } finally {
      await rt.close();
    }
  });

  it('cancel stops within the window and the next start completes the source', async () => {
    const rt = await runtimeAt(path.join(fx.tmp, 'palace-cancel'));
    try {
      const started = await rt.jobs.start(mineSpec(fx.source, 'cancel'));
      let seen = 0;
      for (;;) {
        const p = await rt.jobs.progress(started.job_id);
        seen = p.files_seen;
        if (seen >= MINE_BATCH_FILES || p.state !== 'running') break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const cancelled = await rt.jobs.cancel(started.job_id);
      expect(cancelled.state).toBe('cancelled');
      expect(cancelled.files_seen).toBeLessThan(FILES);
      expect(cancelled.files_seen - seen).toBeLessThanOrEqual(WINDOW * MINE_BATCH_FILES);
      expect(await rt.stores.locks.holder(cancelled.lock_key)).toBeNull();
      const again = await rt.jobs.start(mineSpec(fx.source, 'cancel'));
      const done = await rt.jobs.wait(again.job_id, 600_000);
      expect(done.state).toBe('completed');
      expect(done.files_seen).toBe(FILES);
      expect(await rt.stores.drawers.count({ wing: 'cancel' })).toBe(FILES);
    } finally {
      await rt.close();
    }
  });
});
