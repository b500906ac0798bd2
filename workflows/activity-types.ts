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
  /** A directory source's root as mined (activities/source-root.ts), recorded in its file states. */
  sourceRoot?: { root: string; root_dev: string; root_ino: string };
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

/** Why a sync would delete more than it can prove stale (issue 24 D1): one source root of one wing. */
export interface SyncGuardReason {
  /** `filesystem_changed`: the root is not the directory it was mined from (another device or inode);
   * `mass_deletion`: the sync would delete most of the source's drawers. */
  rule: 'filesystem_changed' | 'mass_deletion';
  wing: string;
  source_root: string;
  /** The source's drawers in this sync's scope, and how many of them (from how many files) it would delete. */
  source_drawers: number;
  removable_drawers: number;
  removable_files: number;
  detail: string;
}

/** The sync guard's verdict: with reasons, an apply deletes nothing unless forced. */
export interface SyncGuard {
  needs_force: boolean;
  forced: boolean;
  /** This run was an apply the guard stopped: nothing was deleted. */
  stopped: boolean;
  reasons: SyncGuardReason[];
  /** The reasons as one text ('' when there are none). */
  message: string;
}

export interface SyncReport {
  scanned: number; kept: number; gitignored: number; missing: number; unresolved: number;
  no_source: number; out_of_scope: number; removed_drawers: number; removed_closets: number;
  dry_run: boolean;
  by_source: Record<string, number>;
  unresolved_by_source: Record<string, number>;
  guard: SyncGuard;
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
