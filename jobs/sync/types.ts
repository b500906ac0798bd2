/**
 * The activities the sync orchestration calls, its report and its guard's verdict. Types only,
 * for the same reason as jobs/mine/types.ts.
 */
import type { Fence, SyncSpec } from '../job.js';

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
  scanned: number;
  kept: number;
  gitignored: number;
  missing: number;
  unresolved: number;
  no_source: number;
  out_of_scope: number;
  removed_drawers: number;
  removed_closets: number;
  dry_run: boolean;
  by_source: Record<string, number>;
  unresolved_by_source: Record<string, number>;
  guard: SyncGuard;
}

export interface SyncActivities {
  syncScan(input: { jobId: string; spec: SyncSpec }): Promise<{ planId: string; report: SyncReport }>;
  syncApply(input: { jobId: string; spec: SyncSpec; planId: string; fence?: Fence }): Promise<{ removed: number }>;
}
