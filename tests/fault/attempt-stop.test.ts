/**
 * Mine steps that stop when their runner stops them, instead of running to their end:
 *
 * - a batch whose first attempt stalls past its start-to-close limit (a stalled process: swap, a
 *   long GC pause): Temporal gives up on that attempt and retries the batch; the given-up attempt,
 *   still running in the worker, sees its cancellation signal and stops before it embeds or writes,
 *   so every batch is embedded by one attempt only;
 * - a cancelled mine, on Temporal and on the embedded runner, stops the batches in flight at once
 *   (a batch of large files can take many minutes): they write nothing, the job's counts match its
 *   drawers, and the next mine completes the source.
 *
 * Each ends with the drawers of a clean run. The embedder is the real MiniLM behind a wrapper that
 * holds one call (tests/helpers/holding-embedder.ts); Temporal, Redis and SQLite are real.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openRuntime } from '../../app/runtime.js';
import { loadConfig } from '../../app/config.js';
import type { JobEngine, JobProgress } from '../../jobs/job.js';
import type { DrawerStore } from '../../stores/ports/palace-stores.js';
import type { Locks } from '../../stores/ports/locks.js';
import { MINE_BATCH_FILES } from '../../jobs/mine/orchestration.js';
import { useCleanMineSource } from '../helpers/clean-mine.js';
import { HoldingEmbedder } from '../helpers/holding-embedder.js';
import { withTemporalRig } from '../helpers/temporal-rig.js';
import { drawerIds, mineSpec } from '../integration/temporal-harness.js';

const MARKER = 'held-attempt-marker';
const WING = 'held';
const FILES = 3 * MINE_BATCH_FILES + 1;
const HEARTBEAT_TIMEOUT_MS = 4_000;
const ATTEMPT_TIMEOUT_MS = 10_000;
/** Longer than the attempt limit plus the heartbeat throttle, so the attempt is given up during the stall. */
const STALL_MS = 25_000;

/** The one file whose batch the holding embedder holds. */
const writeStalledFile = (source: string) =>
  fs.writeFile(path.join(source, 'stalled.md'), `The batch holding this file is held on its first attempt (${MARKER}) until its runner stops it.\n`);

const fx = useCleanMineSource({ prefix: 'mempalace-attempt-stop-', wing: WING, files: FILES - 1, seed: 23, addFiles: writeStalledFile });
beforeAll(() => {
  expect(fx.expected).toHaveLength(FILES);
});

/** The cancel came while the marked batch was held: it stopped there, wrote nothing, and counts match drawers. */
async function expectStoppedInFlight(cancelled: JobProgress, holding: HoldingEmbedder, drawers: DrawerStore, locks: Locks, wing: string): Promise<void> {
  expect(cancelled.state).toBe('cancelled');
  expect(await holding.heldCallEnded(30_000)).toMatchObject({ abortedAfterHold: true, outcome: 'cancelled' });
  expect(cancelled.files_seen).toBeLessThan(FILES);
  expect(await drawers.count({ wing })).toBe(cancelled.files_mined);
  expect(await drawers.count({ wing, sourceFile: path.join(fx.source, 'stalled.md') })).toBe(0);
  expect(await locks.holder(cancelled.lock_key)).toBeNull();
}

/** A mine after the cancelled one completes the source with the clean run's drawers. */
async function expectResumed(engine: JobEngine, drawers: DrawerStore, wing: string): Promise<void> {
  const again = await engine.start(mineSpec(fx.source, wing));
  const done = await engine.wait(again.job_id, 300_000);
  expect(done).toMatchObject({ state: 'completed', files_seen: FILES, errors: 0 });
  expect(await drawerIds(drawers, wing)).toEqual(fx.expected);
}

describe('mine steps stopped by their runner', () => {
  it('Temporal: an attempt given up on (start-to-close) stops at its signal instead of embedding and writing beside its retry', async () => {
    const stalling = new HoldingEmbedder(fx.embedder, MARKER, STALL_MS);
    const timeouts = { leaseMs: 8_000, heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS, activityTimeoutMs: ATTEMPT_TIMEOUT_MS };
    await withTemporalRig({ dir: fx.tmp, label: 'stall', timeouts }, async ({ engine, stores, runWorker }) => {
      await runWorker(stalling);
      const started = await engine.start(mineSpec(fx.source, WING));
      const done = await engine.wait(started.job_id, 300_000);
      expect(done).toMatchObject({ state: 'completed', files_seen: FILES, files_mined: FILES, drawers_written: FILES, errors: 0 });
      expect(await drawerIds(stores.drawers, WING)).toEqual(fx.expected);
      // The retry embedded the marked batch while the first attempt stalled; once the stall ended,
      // that attempt found its signal aborted (Temporal timed it out) and embedded nothing.
      expect(await stalling.heldCallEnded(20_000)).toMatchObject({ abortedAfterHold: true, outcome: 'cancelled' });
      expect(stalling.calls.filter((c) => c.marked && c.outcome === 'vectors')).toHaveLength(1);
      expect(stalling.calls.filter((c) => c.outcome === 'vectors')).toHaveLength(Math.ceil(FILES / MINE_BATCH_FILES));
    });
  });

  it('Temporal: a cancel stops the batches in flight; the next mine completes the source', async () => {
    const holding = new HoldingEmbedder(fx.embedder, MARKER, 'until-aborted');
    await withTemporalRig({ dir: fx.tmp, label: 'stop' }, async ({ engine, stores, runWorker }) => {
      await runWorker(holding);
      const started = await engine.start(mineSpec(fx.source, WING));
      await holding.holdStarted;
      await expectStoppedInFlight(await engine.cancel(started.job_id), holding, stores.drawers, stores.locks, WING);
      await expectResumed(engine, stores.drawers, WING);
    });
  });

  it('embedded runner: a cancel stops the batches in flight; the next mine completes the source', async () => {
    const holding = new HoldingEmbedder(fx.embedder, MARKER, 'until-aborted');
    const rt = await openRuntime(loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: path.join(fx.tmp, 'palace-stop-embedded') }), {
      embedder: holding,
    });
    try {
      const started = await rt.jobs.start(mineSpec(fx.source, WING));
      await holding.holdStarted;
      await expectStoppedInFlight(await rt.jobs.cancel(started.job_id), holding, rt.stores.drawers, rt.stores.locks, WING);
      await expectResumed(rt.jobs, rt.stores.drawers, WING);
    } finally {
      await rt.close();
    }
  });
});
