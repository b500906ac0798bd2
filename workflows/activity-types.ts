/**
 * The activities the job orchestrations call. Types only: workflow code must stay free of I/O
 * and of Node built-ins, so it imports these shapes and never the implementations.
 */
import type { DeleteBySourceSpec, Fence, JobCounters, MineSpec, SyncSpec } from '../palace/jobs.js';

export interface ScanResult {
  /** Key under which the file manifest was stored (never the manifest itself). */
  manifestId: string;
  totalFiles: number;
  wing: string;
  sourceIdentity: string;
  /** The commit mined, for git sources. */
  commit?: string;
  skippedAtScan: number;
  warnings: string[];
}

export interface BatchInput {
  jobId: string;
  spec: MineSpec;
  scan: ScanResult;
  offset: number;
  count: number;
  /** Lease the batch must still hold when it writes (fencing). */
  fence?: Fence;
}

export interface BatchResult extends JobCounters {
  lastFile?: string;
  errorsDetail: { file: string; error: string }[];
  /** Files that produced no drawers and why (unchanged files are only counted). */
  skipsDetail: { file: string; reason: string }[];
  /** Files per room in this batch (for the summary). */
  byRoom: Record<string, number>;
}

export interface MineActivities {
  scanSource(input: { jobId: string; spec: MineSpec }): Promise<ScanResult>;
  mineBatch(input: BatchInput): Promise<BatchResult>;
  finishMine(input: { jobId: string; spec: MineSpec; scan: ScanResult; fence?: Fence }): Promise<{ hallways: number; warnings: string[] }>;
}

export interface SyncReport {
  scanned: number; kept: number; gitignored: number; missing: number; unresolved: number;
  no_source: number; out_of_scope: number; removed_drawers: number; removed_closets: number;
  dry_run: boolean;
  by_source: Record<string, number>;
  unresolved_by_source: Record<string, number>;
}

export interface SyncActivities {
  syncScan(input: { jobId: string; spec: SyncSpec }): Promise<{ planId: string; report: SyncReport }>;
  syncApply(input: { jobId: string; spec: SyncSpec; planId: string; fence?: Fence }): Promise<{ removed: number }>;
}

export interface DeleteBySourceActivities {
  deleteBySourceCount(input: { spec: DeleteBySourceSpec }): Promise<{ match_count: number; match_rows: number; sample: { wing: string; room: string }[] }>;
  deleteBySourceApply(input: { spec: DeleteBySourceSpec; fence?: Fence }): Promise<{ deleted_rows: number }>;
}

/**
 * The activities of `T` as a runner calls them: each takes a second argument, the signal that
 * stops the attempt (a cancelled job, an attempt Temporal gave up on, a worker shutting down).
 * An aborted activity stops within one file or one embedding run and writes nothing after it.
 */
export type Cancellable<T> = {
  [K in keyof T]: T[K] extends (input: infer I) => Promise<infer O> ? (input: I, signal?: AbortSignal) => Promise<O> : T[K];
};
