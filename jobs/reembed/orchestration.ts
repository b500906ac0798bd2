/**
 * Re-embed orchestration: mark the palace as re-embedding, rewrite its vectors page by page
 * (logical drawers in id order, the page boundaries fixed by the offset), then record the new
 * model. Deterministic and free of I/O like jobs/mine/orchestration.ts: the local runner and the Temporal
 * workflow run this same code, and the cursor (an offset and two counts) is all a resumed run
 * needs. A page is idempotent (the same texts give the same vectors), so a crash repeats at most
 * the page it interrupted.
 */
import type { ProgressStep } from '../progress.js';
import type { Fence, JobCounters, ReembedSpec } from '../job.js';

/** Logical drawers per page: a few hundred rows per embed call, like a mining batch. */
export const REEMBED_PAGE_DRAWERS = 128;

export interface ReembedCursor {
  /** Logical drawers in the palace when the re-embed began (writes are refused meanwhile). */
  total?: number;
  /** Logical drawers done: the offset of the next page. */
  offset: number;
  /** Rows whose vector was rewritten. */
  rows: number;
}

export interface ReembedActivities {
  /** Marks the palace as re-embedding for this job (or confirms it did); returns the drawers to do. */
  reembedStart(input: { jobId: string; spec: ReembedSpec }): Promise<{ total: number }>;
  /** Rewrites the vectors of the logical drawers [offset, offset + count). */
  reembedPage(input: { jobId: string; spec: ReembedSpec; offset: number; count: number; fence?: Fence }): Promise<{ rows: number }>;
  /** Records the new model as the palace's; idempotent. */
  reembedFinish(input: { jobId: string; spec: ReembedSpec; fence?: Fence }): Promise<void>;
}

export interface ReembedHooks {
  progress(cursor: ReembedCursor): void | Promise<void>;
  cancelRequested(): boolean;
  handOverRequested?(): boolean;
  fence?: Fence;
}

export type ReembedOutcome = { status: 'completed' | 'cancelled' | 'handover'; cursor: ReembedCursor };

/** The job counters of a re-embed: drawers stand in for files. */
export function reembedCounters(cursor: ReembedCursor): JobCounters {
  return { files_total: cursor.total ?? 0, files_seen: cursor.offset, files_skipped: 0, files_mined: cursor.offset, drawers_written: cursor.rows, errors: 0 };
}

/** Where a re-embed stands at this cursor, as its progress record takes it. */
export function reembedStep(cursor: ReembedCursor): ProgressStep {
  return { counters: reembedCounters(cursor), recentErrors: [] };
}

export async function reembedOrchestration(jobId: string, spec: ReembedSpec, acts: ReembedActivities, hooks: ReembedHooks,
  start: ReembedCursor = { offset: 0, rows: 0 }): Promise<ReembedOutcome> {
  const fence = hooks.fence ? { fence: hooks.fence } : {};
  let cursor = start;
  if (cursor.total === undefined) {
    const { total } = await acts.reembedStart({ jobId, spec });
    cursor = { ...cursor, total };
    await hooks.progress(cursor);
  }
  const total = cursor.total!;
  while (cursor.offset < total) {
    if (hooks.cancelRequested()) return { status: 'cancelled', cursor };
    if (hooks.handOverRequested?.()) return { status: 'handover', cursor };
    const count = Math.min(REEMBED_PAGE_DRAWERS, total - cursor.offset);
    const page = await acts.reembedPage({ jobId, spec, offset: cursor.offset, count, ...fence });
    cursor = { ...cursor, offset: cursor.offset + count, rows: cursor.rows + page.rows };
    await hooks.progress(cursor);
  }
  await acts.reembedFinish({ jobId, spec, ...fence });
  return { status: 'completed', cursor };
}

/** The summary a finished re-embed reports as `output`. */
export function reembedSummary(spec: ReembedSpec, outcome: ReembedOutcome): string {
  const { offset, rows, total } = outcome.cursor;
  if (outcome.status === 'cancelled')
    return `Re-embed to ${spec.model} cancelled after ${offset}/${
      total ?? '?'
    } drawers; the palace takes no new drawers until \`mempalace reembed --model ${spec.model}\` finishes it.`;
  return `Re-embedded ${offset} drawers (${rows} vectors) with ${spec.model}; the palace now records ${spec.model}.`;
}
