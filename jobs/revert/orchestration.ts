/**
 * Revert orchestration (issue 28): plan the revert of one agent's writes, undo its records in
 * batches, newest first, then read the outcome back from the trail and announce it. Deterministic
 * and free of I/O like jobs/reembed/orchestration.ts: the local runner and the Temporal workflow
 * run this same code. The plan never leaves the audit store: each batch plans again from the
 * trail, whose write-ahead records are the checkpoint, so the cursor is a few numbers.
 */
import type { ProgressStep } from '../progress.js';
import type { Fence, JobCounters, RevertSpec } from '../job.js';

/** Records per batch: each batch plans again from the whole trail, so not one record at a time. */
export const REVERT_BATCH_RECORDS = 16;

export interface RevertCursor {
  /** The trail's head when the revert began: later records are only ever conflicts. */
  upTo?: number;
  /** Records to revert (including those an earlier run of this revert already did) and records done. */
  total: number;
  done: number;
  /** Records an earlier run of this revert had done when this job began. */
  skipped: number;
  /** Items set back and items kept as conflicts by this job. */
  items: number;
  conflicts: number;
  /** The last record whose steps this job has seen finish. */
  confirmed?: number;
}

/** The bounded result of a finished revert: counts, and the first conflicts and unrevertable records (the trail holds them all). */
export interface RevertSummary {
  reverted: number;
  items: number;
  conflicts: { item: string; seq: number; later_seq: number; later_identity: string; later_action: string }[];
  conflicts_total: number;
  not_reverted: { seq: number; op: string; reason: string }[];
  not_reverted_total: number;
  correction_event_id?: string;
}

export interface RevertActivities {
  /** Fixes the records the revert undoes (up to the trail's head now) and counts them. */
  revertStart(input: { jobId: string; spec: RevertSpec }): Promise<{ upTo: number; total: number; already: number }>;
  /** Reverts the next `count` records; idempotent (the trail says which are done). */
  revertBatch(input: { jobId: string; spec: RevertSpec; upTo: number; confirmed?: number; count: number; fence?: Fence }): Promise<{
    last?: number;
    items: number;
    conflicts: number;
    remaining: number;
  }>;
  /** The outcome from the trail; announces it on the logstream when `announce`. */
  revertFinish(input: { jobId: string; spec: RevertSpec; upTo: number; announce: boolean; fence?: Fence }): Promise<RevertSummary>;
}

export interface RevertHooks {
  progress(cursor: RevertCursor): void | Promise<void>;
  cancelRequested(): boolean;
  handOverRequested?(): boolean;
  fence?: Fence;
}

export type RevertJobOutcome =
  | { status: 'completed'; cursor: RevertCursor; summary: RevertSummary }
  | { status: 'cancelled' | 'handover'; cursor: RevertCursor };

/** The job counters of a revert: records stand in for files, items set back for drawers written. */
export function revertStep(cursor: RevertCursor): ProgressStep {
  const counters: JobCounters = { files_total: cursor.total, files_seen: cursor.done, files_skipped: cursor.skipped, files_mined: cursor.done - cursor.skipped,
    drawers_written: cursor.items, errors: 0 };
  return { counters, recentErrors: [] };
}

export async function revertOrchestration(jobId: string, spec: RevertSpec, acts: RevertActivities, hooks: RevertHooks,
  start: RevertCursor = { total: 0, done: 0, skipped: 0, items: 0, conflicts: 0 }): Promise<RevertJobOutcome> {
  const fence = hooks.fence ? { fence: hooks.fence } : {};
  let cursor = start;
  if (cursor.upTo === undefined) {
    const { upTo, total, already } = await acts.revertStart({ jobId, spec });
    cursor = { ...cursor, upTo, total, done: already, skipped: already };
    await hooks.progress(cursor);
  }
  const upTo = cursor.upTo!;
  while (cursor.done < cursor.total) {
    if (hooks.cancelRequested()) return { status: 'cancelled', cursor };
    if (hooks.handOverRequested?.()) return { status: 'handover', cursor };
    const confirmed = cursor.confirmed === undefined ? {} : { confirmed: cursor.confirmed };
    const batch = await acts.revertBatch({ jobId, spec, upTo, count: REVERT_BATCH_RECORDS, ...confirmed, ...fence });
    cursor = { ...cursor, done: cursor.total - batch.remaining, items: cursor.items + batch.items, conflicts: cursor.conflicts + batch.conflicts,
      ...(batch.last === undefined ? {} : { confirmed: batch.last }) };
    await hooks.progress(cursor);
  }
  const summary = await acts.revertFinish({ jobId, spec, upTo, announce: cursor.total > cursor.skipped, ...fence });
  return { status: 'completed', cursor, summary };
}

/** The result a revert job reports: its summary, or where a cancelled one stopped and how to go on. */
export function revertResult(spec: RevertSpec, outcome: RevertJobOutcome): Record<string, unknown> {
  const { done, total } = outcome.cursor;
  if (outcome.status !== 'completed') {
    return { success: false, revert_id: spec.revertId,
      output: `Revert ${spec.revertId} cancelled after ${done}/${total} records; \`mempalace revert --resume ${spec.revertId}\` (same selection) goes on.` };
  }
  const s = outcome.summary;
  return { success: true, revert_id: spec.revertId, ...s,
    output: `Reverted ${s.reverted} records of ${spec.agent} (${s.items} items); ${s.conflicts_total} conflicts kept; ${s.not_reverted_total} records not `
      + `revertible item by item; revert id ${spec.revertId}.` };
}
