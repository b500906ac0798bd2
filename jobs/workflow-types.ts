/**
 * What the Temporal client, the workflows and the worker's activities agree on: workflow inputs,
 * signal and query names, the extra activities the workflows call (lease, job record) and the
 * timeouts. Types and constants only, so both the workflow sandbox and Node code import it.
 */
import type { DeleteBySourceSpec, Fence, JobProgress, JobSpec, MineSpec, ReembedSpec, RevertSpec, SyncSpec } from './job.js';
import type { JobRecord } from '../stores/ports/job-store.js';
import type { DeleteBySourceActivities } from './delete-by-source/types.js';
import type { MineActivities } from './mine/types.js';
import type { SyncActivities } from './sync/types.js';
import type { MineCursor } from './mine/orchestration.js';
import type { ReembedActivities, ReembedCursor } from './reembed/orchestration.js';
import type { RevertActivities, RevertCursor } from './revert/orchestration.js';

export const PROGRESS_QUERY = 'progress';
export const CANCEL_SIGNAL = 'cancel';

export const WORKFLOW_TYPES = { mine: 'mineWorkflow', sync: 'syncWorkflow', delete_by_source: 'deleteBySourceWorkflow', reembed: 'reembedWorkflow',
  revert: 'revertWorkflow' } as const;

export type { Fence } from './job.js';

/** Timeouts and lease length, set by the client from configuration and carried by the workflow. */
export interface JobTimeouts {
  leaseMs: number;
  /** An activity that has not heartbeated for this long is retried elsewhere (worker crash). */
  heartbeatTimeoutMs: number;
  /** Upper bound of one attempt of one activity (a batch, a scan, a sync apply). */
  activityTimeoutMs: number;
}

// Heartbeats are what tell a live attempt from a dead or stalled worker; the start-to-close limit
// is only a backstop for an attempt that hangs while heartbeating. It must outlast the longest
// honest batch: one 10 MB bundle is ~12,000 chunks, over 10 minutes on one slow core, and a batch
// can hold several. An attempt cut short by it is retried from scratch and never finishes.
export const DEFAULT_TIMEOUTS: JobTimeouts = { leaseMs: 15_000, heartbeatTimeoutMs: 30_000, activityTimeoutMs: 12 * 60 * 60_000 };

interface JobInputBase {
  /** Lock key of the job (also its workflow id unless it is a dry run). */
  lockKey: string;
  /** Whether the job writes: only writing jobs take the lease. */
  writes: boolean;
  timeouts: JobTimeouts;
}

/** What a run continued as new takes over: where the last one stopped, the lease's fence, the job's start, whether a cancel had come. */
export interface Carried<Cursor> {
  cursor: Cursor;
  fence?: Fence;
  startedAt: string;
  cancelled: boolean;
}

export interface MineWorkflowInput extends JobInputBase {
  spec: MineSpec;
  /** Batches in flight, chosen by the client when the job starts (carried across continue-as-new). */
  window?: number;
  /** Set when a run continues as new: where the previous run stopped. */
  carried?: Carried<MineCursor>;
}

export interface SyncWorkflowInput extends JobInputBase {
  spec: SyncSpec;
}

export interface DeleteBySourceWorkflowInput extends JobInputBase {
  spec: DeleteBySourceSpec;
}

export interface ReembedWorkflowInput extends JobInputBase {
  spec: ReembedSpec;
  /** Set when a run continues as new: where the previous run stopped. */
  carried?: Carried<ReembedCursor>;
}

export interface RevertWorkflowInput extends JobInputBase {
  spec: RevertSpec;
  /** Set when a run continues as new: where the previous run stopped. */
  carried?: Carried<RevertCursor>;
}

export interface LeaseActivities {
  /** Acquire the lease of `key` for the workflow `workflowId`; null while another holder has it. */
  leaseAcquire(input: { key: string; workflowId: string; ttlMs: number }): Promise<Fence | null>;
  leaseRelease(input: { fence: Fence; workflowId: string }): Promise<void>;
}

export interface JobRecordActivities {
  /** Create the job's record unless it exists (the client may have created it first). */
  jobRecordCreate(input: { record: JobRecord<JobSpec, JobProgress> }): Promise<void>;
  /** Replace the job's state and progress (appending a progress event). */
  jobRecordUpdate(input: { jobId: string; state: JobProgress['state']; progress: JobProgress }): Promise<void>;
}

export type WorkerActivities = MineActivities & SyncActivities & DeleteBySourceActivities & ReembedActivities & RevertActivities & LeaseActivities
  & JobRecordActivities;

/**
 * A worker's identity on the task queue names its activity slots, so a client sizing a mine's
 * window can add up the slots of the workers polling (the server reports pollers, not slots).
 */
export function workerIdentity(base: string, activitySlots: number): string {
  return `${base} activity-slots=${activitySlots}`;
}

/** Activity slots a poller's identity names; a worker that names none counts as the default 2. */
export function slotsOfIdentity(identity: string): number {
  const m = /\bactivity-slots=(\d+)\b/.exec(identity);
  return m ? Math.max(1, Number(m[1])) : 2;
}

/** The lease holder of a workflow's jobs: tokens, not holders, tell two runs of one id apart. */
export function leaseHolder(workflowId: string): string {
  return `temporal:${workflowId}`;
}
