/**
 * Keeps the drawers index in few segments. Every flush of a bulk load leaves a segment with its own
 * HNSW graph, and a knn search walks each graph with one shared cut-off score: at 1M drawers 38
 * segments cost recall (0.89 against 1.000 for the same rows in one segment at 100k) and latency
 * (bench/README.md, "1M drawers"). So after a bulk load the index is force-merged to one segment
 * in the background (`wait_for_completion=false`: the request returns a task at once, and
 * searches keep reading the old segments until the merged one replaces them).
 *
 * A bulk load is any run of writes of at least `MERGE_AFTER_ROWS` rows (a mine, an import, a
 * migration, a re-embed) followed by `MERGE_QUIET_MS` without writes; `reindexTo` (repair) and
 * other `withBulkLoadSettings` loads merge as soon as they end. One merge at a time per node: a
 * merge already running is not queued again. Lucene builds the merged graph starting from the
 * largest segment's graph, so merging a load into a large index costs about as much as the
 * load's rows, not the whole index.
 */
import type { OpenSearchConnection } from './connection.js';

export const MERGE_AFTER_ROWS = 10_000;
export const MERGE_QUIET_MS = 30_000;
const FORCE_MERGE_ACTION = 'indices:admin/forcemerge';

/** Starts a force merge of `index` to one segment unless one is running; returns at once. */
export async function startBackgroundMerge(conn: OpenSearchConnection, index: string): Promise<boolean> {
  const tasks = await conn.call(async (c) => (await c.tasks.list({ actions: `${FORCE_MERGE_ACTION}*` })).body as { nodes?: Record<string, { tasks: object }> });
  if (Object.values(tasks.nodes ?? {}).some((n) => Object.keys(n.tasks).length > 0)) return false;
  await conn.call((c) => c.indices.forcemerge({ index, max_num_segments: 1, wait_for_completion: false } as never));
  return true;
}

/** Counts rows written and starts the background merge once a load of enough rows has gone quiet. */
export class MergeAfterLoad {
  private written = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly merge: () => Promise<unknown>) {}

  noteWrites(rows: number): void {
    this.written += rows;
    if (this.written < MERGE_AFTER_ROWS) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.fire(), MERGE_QUIET_MS);
    this.timer.unref();
  }

  private fire(): void {
    this.timer = undefined;
    this.written = 0;
    // Merging only speeds searches up; if it cannot start now (node busy or down), the next load
    // starts it again, and no write depends on it.
    this.merge().catch(() => undefined);
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
