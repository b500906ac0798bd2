/**
 * Mine orchestration: scan the source into a stored manifest, then mine it batch by batch,
 * reporting progress after each batch. Deterministic and free of I/O, so the in-process runner
 * and the Temporal workflow run this same code; the state it carries is a small cursor, which a
 * Temporal workflow hands to continue-as-new.
 */
import type { JobCounters, MineSpec } from '../palace/jobs.js';
import type { BatchResult, MineActivities, ScanResult } from './activity-types.js';

export const MINE_BATCH_FILES = 64;

export interface MineCursor {
  scan?: ScanResult;
  /** Manifest offset of the next batch. */
  offset: number;
  counters: JobCounters;
  byRoom: Record<string, number>;
  recentErrors: { file: string; error: string }[];
  lastFile?: string;
}

export interface MineHooks {
  /** Called after the scan and after every batch with the cursor so far. */
  progress(cursor: MineCursor): void | Promise<void>;
  /** True when the job should stop at the next batch boundary. */
  cancelRequested(): boolean;
  /** True when the caller wants to hand the cursor over (Temporal continue-as-new). */
  handOverRequested?(): boolean;
  fence?: { key: string; token: number };
}

export type MineOutcome =
  | { status: 'completed'; cursor: MineCursor; hallways: number; warnings: string[] }
  | { status: 'cancelled'; cursor: MineCursor }
  | { status: 'handover'; cursor: MineCursor };

export function newMineCursor(): MineCursor {
  return { offset: 0, counters: { files_total: 0, files_seen: 0, files_skipped: 0, files_mined: 0, drawers_written: 0, errors: 0 }, byRoom: {}, recentErrors: [] };
}

function absorb(cursor: MineCursor, batch: BatchResult, count: number): MineCursor {
  const c = cursor.counters;
  const byRoom = { ...cursor.byRoom };
  for (const [room, n] of Object.entries(batch.byRoom)) byRoom[room] = (byRoom[room] ?? 0) + n;
  return {
    ...cursor,
    offset: cursor.offset + count,
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

export async function mineOrchestration(jobId: string, spec: MineSpec, acts: MineActivities, hooks: MineHooks, start: MineCursor = newMineCursor()): Promise<MineOutcome> {
  let cursor = start;
  if (!cursor.scan) {
    const scan = await acts.scanSource({ jobId, spec });
    cursor = { ...cursor, scan, counters: { ...cursor.counters, files_total: scan.totalFiles } };
    await hooks.progress(cursor);
  }
  const scan = cursor.scan!;
  while (cursor.offset < scan.totalFiles) {
    if (hooks.cancelRequested()) return { status: 'cancelled', cursor };
    if (hooks.handOverRequested?.()) return { status: 'handover', cursor };
    const count = Math.min(MINE_BATCH_FILES, scan.totalFiles - cursor.offset);
    const batch = await acts.mineBatch({ jobId, spec, scan, offset: cursor.offset, count, ...(hooks.fence ? { fence: hooks.fence } : {}) });
    cursor = absorb(cursor, batch, count);
    await hooks.progress(cursor);
  }
  if (spec.dryRun) return { status: 'completed', cursor, hallways: 0, warnings: scan.warnings };
  const finish = await acts.finishMine({ jobId, spec, scan, ...(hooks.fence ? { fence: hooks.fence } : {}) });
  return { status: 'completed', cursor, hallways: finish.hallways, warnings: [...scan.warnings, ...finish.warnings] };
}

/** The human-readable summary the mine tool returns as `output` (palace-behaviour §4.10). */
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
