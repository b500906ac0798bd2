/**
 * The cluster profile's JobEngine: jobs are Temporal workflows run by `mempalace worker`
 * processes. A writing job's workflow id is its lock key, so a second start on the same source
 * conflicts at the server and becomes the structured `already_running` error carrying the running
 * job's id and progress. A job's id is the first run id of its workflow (stable across
 * continue-as-new). Progress lives in the JobStore (each workflow records it after every batch),
 * so callers read it the same way as from the local runner; the workflow's `progress` query
 * answers for a running job when the JobStore cannot.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import { PalaceError, isPalaceError, storeUnavailable } from '../../../core/errors.js';
import { failureFields, finishProgress, jobSubject, newJobRecord, newProgress } from '../../progress.js';
import type { JobEngine, JobProgress, JobSpec } from '../../job.js';
import { alreadyRunning, jobLockKey, specWrites, waitForJob } from '../../job.js';
import type { JobRecord, JobStore } from '../../../stores/ports/job-store.js';
import type { JobTimeouts } from '../../workflow-types.js';
import { CANCEL_SIGNAL, DEFAULT_TIMEOUTS, PROGRESS_QUERY, WORKFLOW_TYPES, slotsOfIdentity } from '../../workflow-types.js';

export interface TemporalJobEngineDeps {
  palace: string;
  jobs: JobStore<JobSpec, JobProgress>;
  temporal: { address: string; namespace: string; taskQueue: string };
  timeouts?: Partial<JobTimeouts>;
  pollMs?: number;
  /** Mine batches in flight; 0 or unset: the activity slots of the workers polling the queue. */
  mineWindow?: number;
  /** Tracing is on: workflow starts carry the caller's trace context to the workflow (OpenTelemetry interceptor). */
  traced?: boolean;
}

const TEMPORAL = 'temporal';
/** `temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY` (the proto package is the client's own dependency). */
const TASK_QUEUE_TYPE_ACTIVITY = 2;
/** How long a progress query may wait for a worker before the JobStore answers instead. */
const QUERY_DEADLINE_MS = 5_000;
/**
 * How long a start waits for the workflow of a job whose record has ended to close: its last
 * workflow task, retried after the task timeout (10 s) when its worker died.
 */
const CLOSE_WAIT_MS = 15_000;
/** How often `wait` checks that the workflow of a job still marked running is really running. */
const RECONCILE_MS = 2_000;

export class TemporalJobEngine implements JobEngine {
  private readonly timeouts: JobTimeouts;
  private readonly pollMs: number;

  private constructor(private readonly deps: TemporalJobEngineDeps, private readonly connection: Connection, private readonly client: Client) {
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...deps.timeouts };
    this.pollMs = deps.pollMs ?? 250;
  }

  static async connect(deps: TemporalJobEngineDeps): Promise<TemporalJobEngine> {
    let connection: Connection;
    try {
      connection = await Connection.connect({ address: deps.temporal.address, connectTimeout: 10_000 });
    } catch (e) {
      throw storeUnavailable(TEMPORAL, e);
    }
    // Loaded only when tracing is on, like the SDK itself.
    const interceptors = deps.traced
      ? { workflow: [new (await import('@temporalio/interceptors-opentelemetry')).OpenTelemetryWorkflowClientInterceptor()] }
      : undefined;
    return new TemporalJobEngine(deps, connection, new Client({ connection, namespace: deps.temporal.namespace, ...(interceptors ? { interceptors } : {}) }));
  }

  /** The Temporal client, for operators and tests (history, describe). */
  get temporalClient(): Client {
    return this.client;
  }

  async start(spec: JobSpec): Promise<JobProgress> {
    const writes = specWrites(spec);
    const key = jobLockKey(this.deps.palace, spec, randomUUID());
    const window = spec.kind === 'mine' ? { window: this.deps.mineWindow || (await this.activitySlots()) } : {};
    const begin = async () =>
      (
        await this.client.workflow.start(WORKFLOW_TYPES[spec.kind], {
          taskQueue: this.deps.temporal.taskQueue,
          workflowId: key,
          args: [{ spec, lockKey: key, writes, timeouts: this.timeouts, ...window }],
          workflowIdReusePolicy: 'ALLOW_DUPLICATE',
          workflowIdConflictPolicy: 'FAIL',
        })
      ).firstExecutionRunId;
    let runId: string;
    try {
      runId = await begin().catch(async (e: unknown) => {
        if (!(e instanceof WorkflowExecutionAlreadyStartedError)) throw e;
        const holder = await this.runningOn(key);
        // Its last activity has written the end; the workflow closes with its next task.
        if (holder.state === 'running' || !(await this.closed(key))) throw alreadyRunning(holder);
        return begin();
      });
    } catch (e) {
      if (isPalaceError(e)) throw e;
      if (e instanceof WorkflowExecutionAlreadyStartedError) throw alreadyRunning(await this.runningOn(key));
      throw storeUnavailable(TEMPORAL, e);
    }
    const progress = newProgress({ jobId: runId, kind: spec.kind, lockKey: key, subject: jobSubject(spec) }, new Date().toISOString());
    try {
      await this.deps.jobs.create(newJobRecord(spec, progress));
    } catch (e) {
      // The workflow's first step writes the same record; whichever comes second is a no-op.
      if (!(isPalaceError(e) && e.code === 'already_exists')) throw e;
      return this.progress(runId);
    }
    return progress;
  }

  /**
   * The activity slots of the workers polling the task queue now (each names its slots in its
   * identity): the window that keeps every one of them busy. At least 2, so a worker that joins
   * after the start still finds work while the first one embeds.
   */
  private async activitySlots(): Promise<number> {
    try {
      const { pollers } = await this.client.workflowService.describeTaskQueue({
        namespace: this.deps.temporal.namespace,
        taskQueue: { name: this.deps.temporal.taskQueue },
        taskQueueType: TASK_QUEUE_TYPE_ACTIVITY,
      });
      const identities = new Set((pollers ?? []).map((p) => p.identity ?? ''));
      return Math.max(2, [...identities].reduce((sum, id) => sum + slotsOfIdentity(id), 0));
    } catch {
      return 2;
    }
  }

  /** Whether the workflow closes within CLOSE_WAIT_MS (a worker lost after the last activity makes it retry its task). */
  private async closed(workflowId: string): Promise<boolean> {
    const handle = this.client.workflow.getHandle(workflowId);
    return this.connection
      .withDeadline(Date.now() + CLOSE_WAIT_MS, () => handle.result())
      .then(
        () => true,
        async () => (await handle.describe().catch(() => undefined))?.status.name !== 'RUNNING',
      );
  }

  /** Progress of the job running under `workflowId`: its query, else its JobStore record. */
  private async runningOn(workflowId: string): Promise<JobProgress> {
    const handle = this.client.workflow.getHandle(workflowId);
    try {
      return await this.connection.withDeadline(Date.now() + QUERY_DEADLINE_MS, () => handle.query<JobProgress>(PROGRESS_QUERY));
    } catch {
      // No worker answered in time: the record the workflow keeps, found through its first run id.
      const description = await handle.describe().catch(() => undefined);
      const jobId = description?.raw.workflowExecutionInfo?.firstRunId || description?.runId;
      const record = jobId ? await this.deps.jobs.get(jobId) : await this.deps.jobs.running(workflowId);
      if (record) return record.progress;
      return newProgress({ jobId: jobId ?? 'unknown', kind: 'mine', lockKey: workflowId }, new Date().toISOString());
    }
  }

  private async record(jobId: string): Promise<JobRecord<JobSpec, JobProgress>> {
    const r = await this.deps.jobs.get(jobId);
    if (!r) throw new PalaceError('not_found', `job not found: ${jobId}`, { field: 'job_id' });
    return r;
  }

  /**
   * A record still marked running whose workflow chain has closed without recording its end
   * (terminated by an operator, timed out): record it as failed so nobody waits forever.
   */
  private async reconcile(r: JobRecord<JobSpec, JobProgress>): Promise<JobProgress> {
    const progress = r.progress;
    if (r.state !== 'running') return progress;
    let status: string | undefined;
    try {
      const d = await this.client.workflow.getHandle(r.lock_key).describe();
      const sameChain = (d.raw.workflowExecutionInfo?.firstRunId || d.runId) === r.job_id;
      status = sameChain ? d.status.name : 'SUPERSEDED';
    } catch (e) {
      if (!(e instanceof WorkflowNotFoundError)) return progress;
      status = 'NOT_FOUND';
    }
    if (status === 'RUNNING' || status === 'CONTINUED_AS_NEW') return progress;
    // The workflow may have recorded its end between our two reads.
    const latest = await this.record(r.job_id);
    if (latest.state !== 'running') return latest.progress;
    const failed = finishProgress(progress, 'failed', failureFields(`the job's workflow ended without recording a result (${status.toLowerCase()})`),
      new Date().toISOString());
    await this.deps.jobs.update(r.job_id, 'failed', failed);
    return failed;
  }

  async progress(jobId: string): Promise<JobProgress> {
    return this.reconcile(await this.record(jobId));
  }

  wait(jobId: string, timeoutMs: number, onProgress?: (p: JobProgress) => void): Promise<JobProgress> {
    let lastReconcile = Date.now();
    return waitForJob(async () => {
      const r = await this.record(jobId);
      if (r.progress.state !== 'running' || Date.now() - lastReconcile < RECONCILE_MS) return r.progress;
      lastReconcile = Date.now();
      return this.reconcile(r);
    }, timeoutMs, this.pollMs, onProgress);
  }

  /** Ask the job to stop at its next batch boundary and wait until it has (it releases its lease). */
  async cancel(jobId: string): Promise<JobProgress> {
    const r = await this.record(jobId);
    if (r.state !== 'running') return r.progress;
    try {
      await this.client.workflow.getHandle(r.lock_key, undefined, { firstExecutionRunId: jobId }).signal(CANCEL_SIGNAL, jobId);
    } catch (e) {
      if (!(e instanceof WorkflowNotFoundError)) throw storeUnavailable(TEMPORAL, e);
    }
    return this.wait(jobId, this.timeouts.activityTimeoutMs);
  }

  async list(limit: number): Promise<JobProgress[]> {
    return (await this.deps.jobs.list(limit)).map((r) => r.progress);
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}
