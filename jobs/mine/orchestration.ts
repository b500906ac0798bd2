/**
 * Mine orchestration: scan the source into a stored manifest, then mine it in batches with a
 * window of batches in flight, reporting progress as each one finishes. Deterministic and free
 * of I/O, so the in-process runner and the Temporal workflow run this same code; the state it
 * carries is a small cursor, which a Temporal workflow hands to continue-as-new.
 *
 * The window slides over the manifest the way Temporal's sliding-window batch pattern does: the
 * cursor is a low-water mark (every batch below it is done) plus the finished batches above it.
 * At most `window` batches run at once, and none starts at or past `lowWater + window ·
 * MINE_LOOKAHEAD_WINDOWS` batches, so that set never holds more than `window ·
 * MINE_LOOKAHEAD_WINDOWS - 1` offsets whatever the source size. A run that resumes from a cursor
 * mines exactly the batches it does not list as done: none is redone, none is skipped.
 */
import type { ProgressStep } from '../progress.js';
import { emptyCounters } from '../progress.js';
import type { Fence, JobCounters, MineSpec } from '../job.js';
import type { BatchResult, MineActivities, ScanResult } from './types.js';

export const MINE_BATCH_FILES = 64;
/** Upper bound of the window, whatever is configured: the finished set travels in every cursor. */
export const MAX_MINE_WINDOW = 64;
/**
 * How far past the low-water mark a batch may start, in windows. Real trees are heavy-tailed: a
 * 9 MB bundle in node_modules is ~15,000 drawers, tens of minutes of one embedding thread. A
 * look-ahead of one window would leave every other slot idle until that batch ends; sixteen keep
 * them busy for sixteen windows of ordinary batches, and the finished set stays small (at most
 * 1,023 offsets at the largest window).
 */
export const MINE_LOOKAHEAD_WINDOWS = 16;

export interface MineCursor {
  scan?: ScanResult;
  /** Low-water mark: manifest offset below which every batch is done. */
  offset: number;
  /** Manifest offsets of the finished batches above the low-water mark, ascending. */
  doneAbove?: number[];
  counters: JobCounters;
  byRoom: Record<string, number>;
  recentErrors: { file: string; error: string }[];
  lastFile?: string;
}

export interface MineHooks {
  /** Called after the scan and after every finished batch with the cursor so far (one call at a time). */
  progress(cursor: MineCursor): void | Promise<void>;
  /**
   * True when the job should stop: no batch starts after it. The runner also stops the scan and
   * the batches in flight (their activities' signal); one that still finishes counts, one that
   * ends with an error after the request is not done (a later run mines it), not a failure.
   */
  cancelRequested(): boolean;
  /** True when the caller wants to hand the cursor over (Temporal continue-as-new). */
  handOverRequested?(): boolean;
  /** Batches in flight at once (default 1: one after another). */
  window?: number;
  /** How far past the low-water mark a batch may start, in windows (default MINE_LOOKAHEAD_WINDOWS). */
  lookaheadWindows?: number;
  fence?: Fence;
}

export type MineOutcome =
  | { status: 'completed'; cursor: MineCursor; hallways: number; warnings: string[] }
  | { status: 'cancelled'; cursor: MineCursor }
  | { status: 'handover'; cursor: MineCursor };

export function newMineCursor(): MineCursor {
  return { offset: 0, counters: emptyCounters(), byRoom: {}, recentErrors: [] };
}

/** The cursor after the batch at `offset` finished: its counts added, the low-water mark moved up. */
function absorb(cursor: MineCursor, batch: BatchResult, offset: number, total: number): MineCursor {
  const c = cursor.counters;
  const byRoom = { ...cursor.byRoom };
  for (const [room, n] of Object.entries(batch.byRoom)) byRoom[room] = (byRoom[room] ?? 0) + n;
  const done = new Set(cursor.doneAbove ?? []);
  done.add(offset);
  let low = cursor.offset;
  while (done.has(low)) {
    done.delete(low);
    low = Math.min(total, low + MINE_BATCH_FILES);
  }
  return {
    ...cursor,
    offset: low,
    doneAbove: [...done].sort((a, b) => a - b),
    counters: {
      files_total: c.files_total,
      files_seen: c.files_seen + batch.files_seen,
      files_skipped: c.files_skipped + batch.files_skipped,
      files_mined: c.files_mined + batch.files_mined,
      drawers_written: c.drawers_written + batch.drawers_written,
      errors: c.errors + batch.errors,
    },
    byRoom,
    // Keep the tail only: progress must stay small (it travels through workflow history).
    recentErrors: [...cursor.recentErrors, ...batch.errorsDetail].slice(-10),
    ...(batch.lastFile === undefined ? {} : { lastFile: batch.lastFile }),
  };
}

/** The window actually used: a whole number from 1 to MAX_MINE_WINDOW. */
export function mineWindow(requested: number | undefined): number {
  if (requested === undefined || !Number.isFinite(requested)) return 1;
  return Math.min(MAX_MINE_WINDOW, Math.max(1, Math.floor(requested)));
}

export async function mineOrchestration(jobId: string, spec: MineSpec, acts: MineActivities, hooks: MineHooks,
  start: MineCursor = newMineCursor()): Promise<MineOutcome> {
  let cursor = start;
  if (!cursor.scan) {
    let scan: ScanResult;
    try {
      scan = await acts.scanSource({ jobId, spec });
    } catch (error) {
      if (hooks.cancelRequested()) return { status: 'cancelled', cursor };
      throw error;
    }
    cursor = { ...cursor, scan, counters: { ...cursor.counters, files_total: scan.totalFiles } };
    await hooks.progress(cursor);
  }
  const scan = cursor.scan!;
  const total = scan.totalFiles;
  const window = mineWindow(hooks.window);
  const lookahead = window * (hooks.lookaheadWindows ?? MINE_LOOKAHEAD_WINDOWS) * MINE_BATCH_FILES;
  const fence = hooks.fence ? { fence: hooks.fence } : {};
  // Batches are aligned to multiples of MINE_BATCH_FILES, so an offset names one batch in every run.
  const finished = new Set(cursor.doneAbove ?? []);
  const inFlight = new Map<number, Promise<void>>();
  let failure: { error: unknown } | undefined;
  let next = cursor.offset;
  let stop: 'cancelled' | 'handover' | undefined;
  let reported = cursor;
  for (;;) {
    if (!stop && !failure) {
      if (hooks.cancelRequested()) stop = 'cancelled';
      else if (hooks.handOverRequested?.()) stop = 'handover';
    }
    while (!stop && !failure && inFlight.size < window && next < total && next < cursor.offset + lookahead) {
      const offset = next;
      next += MINE_BATCH_FILES;
      if (finished.has(offset)) continue;
      const count = Math.min(MINE_BATCH_FILES, total - offset);
      inFlight.set(offset, acts.mineBatch({ jobId, spec, scan, offset, count, ...fence }).then(
        (batch) => {
          cursor = absorb(cursor, batch, offset, total);
        },
        (error: unknown) => {
          if (!hooks.cancelRequested()) failure ??= { error };
        },
      ).finally(() => inFlight.delete(offset)));
    }
    if (inFlight.size === 0) break;
    await Promise.race(inFlight.values());
    if (cursor !== reported) {
      reported = cursor;
      await hooks.progress(cursor);
    }
  }
  if (failure) throw failure.error;
  // Batches that finished while the last progress call ran.
  if (cursor !== reported) await hooks.progress(cursor);
  if (stop) return { status: stop, cursor };
  if (spec.dryRun) return { status: 'completed', cursor, hallways: 0, warnings: scan.warnings };
  const finish = await acts.finishMine({ jobId, spec, scan, ...fence });
  return { status: 'completed', cursor, hallways: finish.hallways, warnings: [...scan.warnings, ...finish.warnings] };
}

/** The human-readable summary the mine tool returns as `output` (docs/palace-behaviour.md §4.10). */
export function mineSummary(spec: MineSpec, outcome: MineOutcome): string {
  const { counters: c, byRoom, scan } = outcome.cursor;
  const lines = [
    `Wing: ${scan?.wing ?? '?'}`,
    `Source: ${scan?.sourceIdentity ?? '?'}${scan?.commit ? ` @ ${scan.commit}` : ''}`,
    ...(spec.dryRun ? ['DRY RUN: nothing was written'] : []),
    `Files processed: ${c.files_seen - c.files_skipped}`,
    `Files skipped (${spec.dryRun ? 'read error or too short' : 'unchanged, unreadable or too short'}): ${c.files_skipped}`,
    `Drawers ${spec.dryRun ? 'that would be filed' : 'filed'}: ${c.drawers_written}`,
  ];
  if (c.errors > 0) lines.push(`Errors: ${c.errors}`);
  const rooms = Object.entries(byRoom).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  if (rooms.length > 0) lines.push('By room:', ...rooms.map(([r, n]) => `  ${r}: ${n} files`));
  if (outcome.status === 'cancelled') lines.push(`Cancelled after ${c.files_seen}/${c.files_total} files; re-run to resume.`);
  return lines.join('\n');
}

/** The result a finished or cancelled mine records: the summary, the commit mined, the hallways built. */
export function mineResult(spec: MineSpec, outcome: MineOutcome): Record<string, unknown> {
  return {
    success: outcome.status === 'completed',
    mode: spec.mode,
    dry_run: spec.dryRun,
    output: mineSummary(spec, outcome),
    ...(outcome.cursor.scan?.commit ? { commit: outcome.cursor.scan.commit } : {}),
    ...(outcome.status === 'completed' ? { hallways: outcome.hallways } : {}),
  };
}

/** Where a mine stands at this cursor, as its progress record takes it. */
export function mineStep(cursor: MineCursor): ProgressStep {
  return { counters: cursor.counters, recentErrors: cursor.recentErrors, ...(cursor.lastFile === undefined ? {} : { lastFile: cursor.lastFile }) };
}
