/**
 * The in-process runner with several mine batches in flight: a runner process killed with
 * SIGKILL while three batches run resumes (in another process) without redoing a batch it
 * recorded as finished and without skipping one, ending with exactly the drawer ids of a clean
 * run and exact counts; cancel stops within the window.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../palace/runtime.js';
import { openRuntime } from '../../app/runtime.js';
import { loadConfig } from '../../app/config.js';
import { MiniLmEmbedder } from '../../embed/minilm.js';
import type { MineCursor } from '../../jobs/mine/orchestration.js';
import { MINE_BATCH_FILES, MINE_LOOKAHEAD_WINDOWS } from '../../jobs/mine/orchestration.js';
import { drawerIds, generateSmallFiles, mineSpec } from './temporal-harness.js';

const FILES = 12 * MINE_BATCH_FILES;
const WINDOW = 3;

let tmp: string;
let source: string;
let embedder: MiniLmEmbedder;
let expected: string[];

function runtimeAt(palace: string, window = WINDOW): Promise<Runtime> {
  return openRuntime(
    loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: palace, MEMPALACE_JOB_LEASE_MS: '4000',
      MEMPALACE_MINE_PARALLEL_BATCHES: String(window) }),
    { embedder },
  );
}

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mempalace-window-'));
  source = path.join(tmp, 'source');
  await generateSmallFiles(source, FILES, 23);
  embedder = new MiniLmEmbedder(loadConfig());
  // The clean run, one batch at a time.
  const clean = await runtimeAt(path.join(tmp, 'palace-clean'), 1);
  try {
    const started = await clean.jobs.start(mineSpec(source, 'win'));
    expect((await clean.jobs.wait(started.job_id, 600_000)).state).toBe('completed');
    expected = await drawerIds(clean.stores.drawers, 'win');
  } finally {
    await clean.close();
  }
  expect(expected).toHaveLength(FILES);
});

afterAll(async () => {
  await embedder?.close();
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('local runner with a window of batches', () => {
  it('killed with SIGKILL with batches in flight, resumes to the drawers and counts of a clean run', async () => {
    const palace = path.join(tmp, 'palace-crash');
    const child = spawn(process.execPath, ['--import', 'tsx', 'tests/fixtures/mine-child.ts', palace, source, 'win'], {
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
      const resumed = await rt.jobs.start(mineSpec(source, 'win', { agent: 'crash-test' }));
      expect(resumed.job_id).toBe(stale!.job_id);
      const done = await rt.jobs.wait(resumed.job_id, 600_000);
      expect(done.state).toBe('completed');
      expect(await drawerIds(rt.stores.drawers, 'win')).toEqual(expected);
      // Exact: every file counted once, as mined, even those of batches redone after the kill.
      expect(done).toMatchObject({ files_total: FILES, files_seen: FILES, files_mined: FILES, files_skipped: 0, drawers_written: FILES, errors: 0 });
    } finally {
      await rt.close();
    }
  });

  it('cancel stops within the window and the next start completes the source', async () => {
    const rt = await runtimeAt(path.join(tmp, 'palace-cancel'));
    try {
      const started = await rt.jobs.start(mineSpec(source, 'cancel'));
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
      const again = await rt.jobs.start(mineSpec(source, 'cancel'));
      const done = await rt.jobs.wait(again.job_id, 600_000);
      expect(done.state).toBe('completed');
      expect(done.files_seen).toBe(FILES);
      expect(await rt.stores.drawers.count({ wing: 'cancel' })).toBe(FILES);
    } finally {
      await rt.close();
    }
  });
});
