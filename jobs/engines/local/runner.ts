/**
 * The embedded profile's JobEngine: runs the same orchestration code as the Temporal workflows,
 * in this process, with its state in the JobStore. A lease per source (with a fencing token,
 * renewed while the job runs) keeps two runners off one source; a job whose runner died keeps
 * its cursor and is resumed by the next start on that source once the lease has expired.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { PalaceError } from '../../../core/errors.js';
import type { ProgressStep } from '../../progress.js';
import { advanceProgress, failureFields, finishProgress, jobSubject, newJobRecord, newProgress } from '../../progress.js';
import type { Fence, JobEngine, JobProgress, JobSpec, MineSpec, ReembedSpec, RevertSpec } from '../../job.js';
import { alreadyRunning, jobLockKey, specWrites, waitForJob } from '../../job.js';
import type { JobRecord, JobStore } from '../../../stores/ports/job-store.js';
import type { Locks } from '../../../stores/ports/locks.js';
import type { Cancellable } from '../../cancellation.js';
import type { DeleteBySourceActivities } from '../../delete-by-source/types.js';
import type { MineActivities } from '../../mine/types.js';
import type { SyncActivities } from '../../sync/types.js';
import { deleteBySourceOrchestration } from '../../delete-by-source/orchestration.js';
import type { MineCursor } from '../../mine/orchestration.js';
import { mineOrchestration, mineResult, mineStep, newMineCursor } from '../../mine/orchestration.js';
import { syncOrchestration } from '../../sync/orchestration.js';
import type { ReembedActivities, ReembedCursor } from '../../reembed/orchestration.js';
import { reembedOrchestration, reembedStep, reembedSummary } from '../../reembed/orchestration.js';
import type { RevertActivities, RevertCursor } from '../../revert/orchestration.js';
import { revertOrchestration, revertResult, revertStep } from '../../revert/orchestration.js';

export interface LocalRunnerDeps {
  palace: string;
  jobs: JobStore<JobSpec, JobProgress>;
  locks: Locks;
  activities: Cancellable<MineActivities & SyncActivities & DeleteBySourceActivities & ReembedActivities & RevertActivities>;
  leaseMs?: number;
  pollMs?: number;
  /** Mine batches in flight (default 2: reading and chunking the next overlaps embedding one). */
  mineWindow?: number;
  /** Told once a job has recorded its end (the embedded notifications). */
  notify?: (progress: JobProgress) => void;
}

/** The embedder runs in its own thread: one batch embeds while the next is read and chunked. */
const LOCAL_MINE_WINDOW = 2;

/** Reads (50 ms apart) of the record of a job whose lease was just taken by another start. */
const HOLDER_RECORD_TRIES = 20;

interface Running {
  cancel: boolean;
  /** Aborted with `cancel`: stops a mine's scan and the batches in flight. */
  abort: AbortController;
  done: Promise<void>;
}

/** Stop a running job: no step starts after this, and a mine's steps under way stop early. */
function stopJob(entry: Running): void {
  entry.cancel = true;
  entry.abort.abort();
}

export class LocalJobEngine implements JobEngine {
  private readonly running = new Map<string, Running>();
  private readonly holder = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly leaseMs: number;
  private readonly pollMs: number;

  constructor(private readonly deps: LocalRunnerDeps) {
    this.leaseMs = deps.leaseMs ?? 30_000;
    this.pollMs = deps.pollMs ?? 200;
  }

  async start(spec: JobSpec): Promise<JobProgress> {
    const writes = specWrites(spec);
    const jobId = randomUUID();
    const key = jobLockKey(this.deps.palace, spec, jobId);
    const previous = await this.deps.jobs.running(key);
    const lease = writes ? await this.deps.locks.acquire(key, this.holder, this.leaseMs) : undefined;
    if (writes && !lease) {
      const holder = await this.recordOfHolder(key);
      if (holder) throw alreadyRunning(holder.progress);
      throw new PalaceError('already_running', 'another job holds the lock on this source', { details: { error_class: 'LockHeldByOtherProcess' } });
    }
    let record: JobRecord<JobSpec, JobProgress>;
    if (previous && JSON.stringify(previous.spec) === JSON.stringify(spec)) {
      // The previous runner died holding this job: resume it from its stored cursor.
      record = previous;
    } else {
      if (previous) await this.finish(previous, 'failed', { error: 'abandoned: its runner stopped and a different job took the source' });
      record = newJobRecord(spec, newProgress({ jobId, kind: spec.kind, lockKey: key, subject: jobSubject(spec) }, new Date().toISOString()));
      await this.deps.jobs.create(record);
    }
    const fence: Fence | undefined = lease ? { key, token: lease.token, holder: this.holder, ttlMs: this.leaseMs } : undefined;
    const entry: Running = { cancel: false, abort: new AbortController(), done: Promise.resolve() };
    this.running.set(record.job_id, entry);
    entry.done = this.run(record, spec, entry, fence).finally(() => this.running.delete(record.job_id));
    return record.progress;
  }

  /**
   * The running record on `key` whose lease another start has just taken: that start writes its
   * record right after the lease, so look again for a moment before giving up on naming the job.
   */
  private async recordOfHolder(key: string): Promise<JobRecord<JobSpec, JobProgress> | undefined> {
    for (let attempt = 0; attempt < HOLDER_RECORD_TRIES; attempt++) {
      const record = await this.deps.jobs.running(key);
      if (record) return record;
      await new Promise((r) => setTimeout(r, 50));
    }
    return undefined;
  }

  private async finish(r: JobRecord<JobSpec, JobProgress>, state: 'completed' | 'cancelled' | 'failed', extra: Partial<JobProgress>,
    cursor?: unknown): Promise<void> {
    const latest = (await this.deps.jobs.get(r.job_id)) ?? r;
    const progress = finishProgress(latest.progress, state, extra, new Date().toISOString());
    await this.deps.jobs.update(r.job_id, state, progress, cursor);
    this.deps.notify?.(progress);
  }

  private async run(record: JobRecord<JobSpec, JobProgress>, spec: JobSpec, entry: Running, fence: Fence | undefined): Promise<void> {
    const renew = fence
      ? setInterval(() => {
        this.deps.locks.reclaim(fence.key, this.holder, fence.token, this.leaseMs).then((held) => {
          if (!held) stopJob(entry);
        }, () => stopJob(entry));
      }, Math.max(1000, Math.floor(this.leaseMs / 3)))
      : undefined;
    try {
      if (spec.kind === 'mine') await this.runMine(record, spec, entry, fence);
      else if (spec.kind === 'reembed') await this.runReembed(record, spec, entry, fence);
      else if (spec.kind === 'revert') await this.runRevert(record, spec, entry, fence);
      else if (spec.kind === 'sync') {
        const report = await syncOrchestration(record.job_id, spec, this.deps.activities, fence);
        await this.finish(record, 'completed', { result: { success: true, ...report } });
      } else {
        const result = await deleteBySourceOrchestration(spec, this.deps.activities, fence);
        await this.finish(record, 'completed', { result });
      }
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      await this.finish(record, 'failed', failureFields(message, e instanceof PalaceError ? e.code : undefined));
    } finally {
      if (renew) clearInterval(renew);
      if (fence) await this.deps.locks.release(fence.key, this.holder, fence.token).catch(() => undefined);
      await this.deps.jobs.dropArtifacts(`${record.job_id}:`).catch(() => undefined);
    }
  }

  /**
   * The hooks of a job with a cursor: its cancellation, its lease's fence, and a progress hook that
   * records the new counters and the cursor together (what a resumed job starts from), renewing the
   * lease at every batch boundary too (a long batch can delay the renewal timer; a lease lost stops
   * the job).
   */
  private cursorHooks<Cursor>(record: JobRecord<JobSpec, JobProgress>, entry: Running, fence: Fence | undefined, stepOf: (cursor: Cursor) => ProgressStep) {
    return {
      cancelRequested: () => entry.cancel,
      ...(fence ? { fence } : {}),
      progress: async (cursor: Cursor) => {
        if (fence && !(await this.deps.locks.reclaim(fence.key, this.holder, fence.token, this.leaseMs))) stopJob(entry);
        record.progress = advanceProgress(record.progress, stepOf(cursor), Date.now());
        await this.deps.jobs.update(record.job_id, 'running', record.progress, cursor);
      },
    };
  }

  /** A cursor job's end: completed, or cancelled where its cursor stopped, with its result. */
  private settle(record: JobRecord<JobSpec, JobProgress>, outcome: { status: string; cursor: unknown }, result: Record<string, unknown>): Promise<void> {
    return this.finish(record, outcome.status === 'completed' ? 'completed' : 'cancelled', { result }, outcome.cursor);
  }

  private async runMine(record: JobRecord<JobSpec, JobProgress>, spec: MineSpec, entry: Running, fence: Fence | undefined): Promise<void> {
    const start = (record.cursor as MineCursor | undefined) ?? newMineCursor();
    const a = this.deps.activities;
    const { signal } = entry.abort;
    const acts: MineActivities = { scanSource: (i) => a.scanSource(i, signal), mineBatch: (i) => a.mineBatch(i, signal), finishMine: (i) => a.finishMine(i) };
    const window = this.deps.mineWindow || LOCAL_MINE_WINDOW;
    const outcome = await mineOrchestration(record.job_id, spec, acts, { ...this.cursorHooks(record, entry, fence, mineStep), window }, start);
    await this.settle(record, outcome, mineResult(spec, outcome));
  }

  private async runReembed(record: JobRecord<JobSpec, JobProgress>, spec: ReembedSpec, entry: Running, fence: Fence | undefined): Promise<void> {
    const outcome = await reembedOrchestration(record.job_id, spec, this.deps.activities, this.cursorHooks(record, entry, fence, reembedStep),
      (record.cursor as ReembedCursor | undefined) ?? { offset: 0, rows: 0 });
    await this.settle(record, outcome, { success: outcome.status === 'completed', model: spec.model, output: reembedSummary(spec, outcome) });
  }

  private async runRevert(record: JobRecord<JobSpec, JobProgress>, spec: RevertSpec, entry: Running, fence: Fence | undefined): Promise<void> {
    const a = this.deps.activities;
    const { signal } = entry.abort;
    const acts: RevertActivities = { revertStart: (i) => a.revertStart(i, signal), revertBatch: (i) => a.revertBatch(i, signal),
      revertFinish: (i) => a.revertFinish(i) };
    const outcome = await revertOrchestration(record.job_id, spec, acts, this.cursorHooks(record, entry, fence, revertStep),
      record.cursor as RevertCursor | undefined);
    await this.settle(record, outcome, revertResult(spec, outcome));
  }

  async progress(jobId: string): Promise<JobProgress> {
    const r = await this.deps.jobs.get(jobId);
    if (!r) throw new PalaceError('not_found', `job not found: ${jobId}`, { field: 'job_id' });
    return r.progress;
  }

  wait(jobId: string, timeoutMs: number, onProgress?: (p: JobProgress) => void): Promise<JobProgress> {
    return waitForJob(() => this.progress(jobId), timeoutMs, this.pollMs, onProgress);
  }

  async cancel(jobId: string): Promise<JobProgress> {
    const entry = this.running.get(jobId);
    if (entry) {
      stopJob(entry);
      await entry.done;
    }
    return this.progress(jobId);
  }

  async list(limit: number): Promise<JobProgress[]> {
    return (await this.deps.jobs.list(limit)).map((r) => r.progress);
  }

  /** Stop running jobs (a mine's batches in flight stop early) and wait for them. */
  async close(): Promise<void> {
    for (const entry of this.running.values()) stopJob(entry);
    await Promise.all([...this.running.values()].map((e) => e.done));
  }
}
