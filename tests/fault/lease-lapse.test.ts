/**
 * Mines whose lease renewals keep arriving late (a stalled process: every renewal and take-back
 * waits out a pause longer than the lease), so the source's lease lapses again and again mid-run
 * with nobody else wanting it, on the Temporal engine and on the embedded runner. The holder
 * takes the lease back under the same token each time (a batch's write that finds it lapsed does
 * too), and the mine completes with exactly the drawers of a clean run on the one token it
 * started with. The locks are the real Redis and SQLite leases behind a wrapper that delays
 * calls; nothing about either store is simulated.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createJobActivities } from '../../jobs/activities.js';
import { openRuntime } from '../../app/runtime.js';
import { loadConfig } from '../../app/config.js';
import type { JobEngine, JobProgress } from '../../jobs/job.js';
import { LocalJobEngine } from '../../jobs/engines/local/runner.js';
import { MINE_BATCH_FILES } from '../../jobs/mine/orchestration.js';
import { DEFAULT_TIMEOUTS } from '../../jobs/workflow-types.js';
import { useCleanMineSource } from '../helpers/clean-mine.js';
import { LateRenewals } from '../helpers/late-renewals.js';
import { withTemporalRig } from '../helpers/temporal-rig.js';
import { drawerIds, mineSpec } from '../integration/temporal-harness.js';

const SMALL_FILES = 12 * MINE_BATCH_FILES;
/** Files long enough that their batch outlasts a pause or two, as a large file's does. */
const LONG_FILES = 3;
const FILES = SMALL_FILES + LONG_FILES;
const LEASE_MS = 1_000;
const PAUSE_MS = 2_500;

async function writeLongFiles(source: string): Promise<void> {
  for (let i = 0; i < LONG_FILES; i++) {
    const paragraphs = Array.from({ length: 400 }, (_, p) =>
      `Paragraph ${p} of long file ${i}: the worker renews the lease of this source while it embeds every chunk of a file this long, and a late renewal lets the lease lapse.`);
    await fs.writeFile(path.join(source, `long-${i}.md`), paragraphs.join('\n\n'));
  }
}

const fx = useCleanMineSource({ prefix: 'mempalace-lease-lapse-', wing: 'lapse', files: SMALL_FILES, seed: 41, addFiles: writeLongFiles });
beforeAll(() => {
  expect(fx.expected.length).toBeGreaterThan(FILES + 50 * LONG_FILES);
});

const embeddedConfig = (palace: string) => loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: path.join(fx.tmp, palace) });

/** Start the mine, pause renewals again and again while it runs, and return how it ended. */
async function mineUnderPauses(engine: JobEngine, locks: LateRenewals): Promise<JobProgress> {
  const started = await engine.start(mineSpec(fx.source, 'lapse'));
  for (;;) {
    const p = await engine.progress(started.job_id);
    if (p.state !== 'running') break;
    if (p.files_seen > 0) await locks.pause(PAUSE_MS);
    await new Promise((r) => setTimeout(r, 500));
  }
  return engine.wait(started.job_id, 600_000);
}

function expectTakenBack(label: string, done: JobProgress, locks: LateRenewals): void {
  console.log(
    `lease lapse (${label}): ${locks.pauses} pauses of ${PAUSE_MS} ms on a ${LEASE_MS} ms lease, ${locks.lapsesSeen} lapses noticed, ${locks.takenBack} taken back, tokens ${
      [...locks.tokens].join(', ')
    }, ${done.drawers_written} drawers`,
  );
  expect(done).toMatchObject({ state: 'completed', files_seen: FILES, files_mined: FILES, drawers_written: fx.expected.length, errors: 0 });
  expect(locks.pauses).toBeGreaterThanOrEqual(3);
  // The lease really lapsed mid-run, more than once, and came back each time under the first token.
  expect(locks.lapsesSeen).toBeGreaterThanOrEqual(3);
  expect(locks.takenBack).toBe(locks.lapsesSeen);
  expect([...locks.tokens]).toHaveLength(1);
}

describe('mines under late lease renewals', () => {
  it('Temporal: a lease that lapses again and again with nobody else wanting it is taken back; the mine completes on its one token', async () => {
    const timeouts = { leaseMs: LEASE_MS, heartbeatTimeoutMs: 10_000, activityTimeoutMs: DEFAULT_TIMEOUTS.activityTimeoutMs };
    await withTemporalRig({ dir: fx.tmp, label: 'temporal', timeouts }, async ({ engine, stores, runWorker }) => {
      const locks = new LateRenewals(stores.locks);
      await runWorker(fx.embedder, { locks, leaseMs: LEASE_MS });
      const done = await mineUnderPauses(engine, locks);
      expectTakenBack('temporal', done, locks);
      expect(await drawerIds(stores.drawers, 'lapse')).toEqual(fx.expected);
      expect(await stores.locks.holder(done.lock_key)).toBeNull();
    });
  });

  it('embedded runner: the same lapses are taken back instead of cancelling the mine', async () => {
    const config = embeddedConfig('palace-embedded');
    const rt = await openRuntime(config, { embedder: fx.embedder });
    const locks = new LateRenewals(rt.stores.locks);
    const activities = createJobActivities({ config, stores: rt.stores, embedder: fx.embedder, workspace: path.join(config.palaceDir, 'workspace') });
    const engine = new LocalJobEngine({ palace: rt.stores.palace, jobs: rt.stores.jobs, locks, activities, leaseMs: LEASE_MS });
    try {
      const done = await mineUnderPauses(engine, locks);
      expectTakenBack('embedded', done, locks);
      expect(await drawerIds(rt.stores.drawers, 'lapse')).toEqual(fx.expected);
      expect(await rt.stores.locks.holder(done.lock_key)).toBeNull();
    } finally {
      await engine.close();
      await rt.close();
    }
  });
});
