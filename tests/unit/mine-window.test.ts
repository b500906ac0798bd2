/**
 * The mine orchestration's window of batches in flight, on scripted activities: at most `window`
 * batches run at once, a slow batch holds the low-water mark but not the other slots, the finished
 * set above the mark stays within the look-ahead, a run
 * resumed from any recorded cursor mines exactly the batches that cursor does not list as done,
 * cancel and hand-over stop within the window, and a failed batch fails the job after the others
 * in flight have finished.
 */
import { describe, expect, it } from 'vitest';
import type { MineSpec } from '../../jobs/job.js';
import type { BatchInput, BatchResult, MineActivities, ScanResult } from '../../jobs/mine/types.js';
import type { MineCursor, MineHooks } from '../../jobs/mine/orchestration.js';
import { MINE_BATCH_FILES, MINE_LOOKAHEAD_WINDOWS, mineOrchestration, newMineCursor } from '../../jobs/mine/orchestration.js';

const spec: MineSpec = {
  kind: 'mine',
  source: { kind: 'dir', path: '/src' },
  mode: 'projects',
  wing: 'w',
  agent: 'a',
  limit: 0,
  dryRun: false,
  extract: 'exchange',
  respectGitignore: true,
  includeIgnored: [],
};

/** Activities over a manifest of `total` files: each batch files every file as one drawer. */
class ScriptedActivities implements MineActivities {
  readonly mined: number[] = [];
  /** Batch starts and failures in the order they happened. */
  readonly events: string[] = [];
  inFlight = 0;
  maxInFlight = 0;
  private tick = 0;

  constructor(readonly total: number, private readonly failAt?: number, private readonly hold?: { offset: number; until: Promise<void> }) {}

  async scanSource(): Promise<ScanResult> {
    return { manifestId: 'm', totalFiles: this.total, wing: 'w', sourceIdentity: '/src', skippedAtScan: 0, warnings: [] };
  }

  async mineBatch(input: BatchInput): Promise<BatchResult> {
    expect(input.offset % MINE_BATCH_FILES).toBe(0);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    this.events.push(`start ${input.offset}`);
    // Batches finish out of order: a later one often before an earlier one.
    const delay = [3, 1, 4, 1, 5, 9, 2, 6][this.tick++ % 8]!;
    await new Promise((r) => setTimeout(r, delay));
    if (input.offset === this.hold?.offset) await this.hold.until;
    this.inFlight--;
    if (input.offset === this.failAt) {
      this.events.push(`fail ${input.offset}`);
      throw new Error(`batch ${input.offset} failed`);
    }
    this.mined.push(input.offset);
    return {
      files_total: 0,
      files_seen: input.count,
      files_skipped: 0,
      files_mined: input.count,
      drawers_written: input.count,
      errors: 0,
      errorsDetail: [],
      skipsDetail: [],
      byRoom: { general: input.count },
      lastFile: `f${input.offset + input.count - 1}`,
    };
  }

  async finishMine(): Promise<{ hallways: number; warnings: string[] }> {
    return { hallways: 0, warnings: [] };
  }
}

function hooks(snapshots: MineCursor[], extra: Partial<MineHooks> = {}): MineHooks {
  return { progress: (c) => void snapshots.push(structuredClone(c)), cancelRequested: () => false, ...extra };
}

/** A hold for the batch at `offset`: it finishes only after `release()`, which is logged in `events`. */
function heldBatch(offset: number, events: () => string[]): { hold: { offset: number; until: Promise<void> }; release: () => void } {
  let resolve!: () => void;
  const until = new Promise<void>((r) => (resolve = r));
  return {
    hold: { offset, until },
    release: () => {
      if (!events().includes('release')) events().push('release');
      resolve();
    },
  };
}

const allOffsets = (total: number) => Array.from({ length: Math.ceil(total / MINE_BATCH_FILES) }, (_, i) => i * MINE_BATCH_FILES);

describe('mine orchestration window', () => {
  it('keeps at most `window` batches in flight, mines each once and counts exactly', async () => {
    const total = 20 * MINE_BATCH_FILES + 17;
    const acts = new ScriptedActivities(total);
    const snapshots: MineCursor[] = [];
    const outcome = await mineOrchestration('job', spec, acts, hooks(snapshots, { window: 4 }));
    expect(outcome.status).toBe('completed');
    expect(acts.maxInFlight).toBe(4);
    expect([...acts.mined].sort((a, b) => a - b)).toEqual(allOffsets(total));
    expect(outcome.cursor.offset).toBe(total);
    expect(outcome.cursor.doneAbove).toEqual([]);
    expect(outcome.cursor.counters).toMatchObject({ files_total: total, files_seen: total, files_mined: total, drawers_written: total });
    expect(outcome.cursor.byRoom).toEqual({ general: total });
    for (const s of snapshots) {
      expect((s.doneAbove ?? []).length).toBeLessThanOrEqual(4 * MINE_LOOKAHEAD_WINDOWS - 1);
      for (const d of s.doneAbove ?? []) expect(d).toBeLessThan(s.offset + 4 * MINE_LOOKAHEAD_WINDOWS * MINE_BATCH_FILES);
      // A cursor's counts are exactly those of the batches it lists as done.
      const done = s.offset === total ? total : s.offset + (s.doneAbove ?? []).length * MINE_BATCH_FILES;
      expect(s.counters.files_seen).toBe(done);
    }
    // Finishing out of order really happened: some cursor had a finished batch above a hole.
    expect(snapshots.some((s) => (s.doneAbove ?? []).length > 0)).toBe(true);
  });

  it('a slow batch at the low-water mark holds the mark, not the other slots, up to the look-ahead', async () => {
    const window = 2;
    const lookahead = window * MINE_LOOKAHEAD_WINDOWS;
    const total = (lookahead + 8) * MINE_BATCH_FILES;
    const { hold, release } = heldBatch(0, () => acts.events);
    const acts = new ScriptedActivities(total, undefined, hold);
    const snapshots: MineCursor[] = [];
    // Without a look-ahead nothing would release it: end it after 2 s so the counts below fail instead.
    const fallback = setTimeout(() => release(), 2_000);
    const run = mineOrchestration('job', spec, acts, hooks(snapshots, {
      window,
      // Once every batch the look-ahead allows has finished, the slow one may end.
      progress: (c) => {
        snapshots.push(structuredClone(c));
        if ((c.doneAbove ?? []).length === lookahead - 1) setTimeout(release, 20);
      },
    }));
    const outcome = await run;
    clearTimeout(fallback);
    expect(outcome.status).toBe('completed');
    expect(acts.maxInFlight).toBe(window);
    // While batch 0 ran, the other slot mined every batch below the look-ahead and none past it.
    const beforeRelease = acts.events.slice(0, acts.events.indexOf('release'));
    expect(beforeRelease.filter((e) => e.startsWith('start'))).toEqual(allOffsets(lookahead * MINE_BATCH_FILES).map((o) => `start ${o}`));
    const fullest = snapshots.reduce((m, s) => Math.max(m, (s.doneAbove ?? []).length), 0);
    expect(fullest).toBe(lookahead - 1);
    expect(snapshots.every((s) => s.offset > 0 || (s.doneAbove ?? []).every((d) => d < lookahead * MINE_BATCH_FILES))).toBe(true);
    expect([...acts.mined].sort((a, b) => a - b)).toEqual(allOffsets(total));
    expect(outcome.cursor.counters.files_seen).toBe(total);
  });

  it('with a look-ahead of one window (histories recorded before the look-ahead) it schedules as before: the slow batch holds the window', async () => {
    const { hold, release } = heldBatch(0, () => acts.events);
    const acts = new ScriptedActivities(6 * MINE_BATCH_FILES, undefined, hold);
    const timer = setTimeout(release, 300);
    const outcome = await mineOrchestration('job', spec, acts, hooks([], { window: 2, lookaheadWindows: 1 }));
    clearTimeout(timer);
    expect(outcome.status).toBe('completed');
    expect(acts.events.slice(0, acts.events.indexOf('release'))).toEqual(['start 0', 'start 64']);
    expect([...acts.mined].sort((a, b) => a - b)).toEqual(allOffsets(6 * MINE_BATCH_FILES));
  });

  it('resumed from any recorded cursor, mines exactly the batches not yet done and ends with the clean counts', async () => {
    const total = 12 * MINE_BATCH_FILES;
    const first = new ScriptedActivities(total);
    const snapshots: MineCursor[] = [];
    await mineOrchestration('job', spec, first, hooks(snapshots, { window: 3 }));
    const withHoles = snapshots.filter((s) => (s.doneAbove ?? []).length > 0);
    expect(withHoles.length).toBeGreaterThan(0);
    for (const crashAt of withHoles) {
      const resumed = new ScriptedActivities(total);
      const outcome = await mineOrchestration('job', spec, resumed, hooks([], { window: 3 }), crashAt);
      const done = new Set([...allOffsets(total).filter((o) => o < crashAt.offset), ...(crashAt.doneAbove ?? [])]);
      expect([...resumed.mined].sort((a, b) => a - b)).toEqual(allOffsets(total).filter((o) => !done.has(o)));
      expect(outcome.cursor.counters.files_seen).toBe(total);
      expect(outcome.cursor.counters.drawers_written).toBe(total);
    }
  });

  it('a resumed run may use another window: the carried finished set is still honoured', async () => {
    const total = 8 * MINE_BATCH_FILES;
    const start: MineCursor = { ...newMineCursor(), offset: 2 * MINE_BATCH_FILES, doneAbove: [3 * MINE_BATCH_FILES, 6 * MINE_BATCH_FILES] };
    start.scan = await new ScriptedActivities(total).scanSource();
    start.counters = { ...start.counters, files_total: total, files_seen: 4 * MINE_BATCH_FILES };
    const acts = new ScriptedActivities(total);
    const outcome = await mineOrchestration('job', spec, acts, hooks([], { window: 1 }), start);
    expect(acts.mined).toEqual([2, 4, 5, 7].map((b) => b * MINE_BATCH_FILES));
    expect(outcome.cursor.counters.files_seen).toBe(total);
  });

  it('cancel starts no batch after it and lets the ones in flight finish', async () => {
    const total = 30 * MINE_BATCH_FILES;
    const acts = new ScriptedActivities(total);
    let cancel = false;
    let minedAtCancel = -1;
    const outcome = await mineOrchestration('job', spec, acts, {
      window: 4,
      cancelRequested: () => cancel,
      progress: (c) => {
        if (c.counters.files_seen >= 5 * MINE_BATCH_FILES && !cancel) {
          cancel = true;
          minedAtCancel = acts.mined.length;
        }
      },
    });
    expect(outcome.status).toBe('cancelled');
    expect(acts.inFlight).toBe(0);
    expect(acts.mined.length - minedAtCancel).toBeLessThanOrEqual(4);
    expect(acts.mined.length).toBeLessThan(30);
    expect(outcome.cursor.counters.files_seen).toBe(acts.mined.length * MINE_BATCH_FILES);
  });

  it('hands over after draining its window; the next run completes from the carried cursor', async () => {
    const total = 16 * MINE_BATCH_FILES;
    const acts = new ScriptedActivities(total);
    let batches = 0;
    const first = await mineOrchestration('job', spec, acts, {
      window: 4,
      cancelRequested: () => false,
      handOverRequested: () => batches >= 6,
      progress: () => void batches++,
    });
    expect(first.status).toBe('handover');
    expect(acts.inFlight).toBe(0);
    const second = await mineOrchestration('job', spec, acts, hooks([], { window: 4 }), structuredClone(first.cursor));
    expect(second.status).toBe('completed');
    expect([...acts.mined].sort((a, b) => a - b)).toEqual(allOffsets(total));
    expect(second.cursor.counters.files_seen).toBe(total);
  });

  it('a failed batch fails the job once the batches in flight have finished, and none starts after it', async () => {
    const total = 20 * MINE_BATCH_FILES;
    const acts = new ScriptedActivities(total, 5 * MINE_BATCH_FILES);
    await expect(mineOrchestration('job', spec, acts, hooks([], { window: 4 }))).rejects.toThrow('batch 320 failed');
    expect(acts.inFlight).toBe(0);
    const failedAt = acts.events.indexOf('fail 320');
    expect(failedAt).toBeGreaterThan(0);
    expect(acts.events.slice(failedAt + 1).filter((e) => e.startsWith('start'))).toEqual([]);
    expect(acts.mined.length).toBeLessThan(19);
  });
});
