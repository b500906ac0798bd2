/**
 * Short, high-volume jobs of the cluster profile on BullMQ (same Redis as the stores, keys under
 * the palace's hash tag `mempalace:{<palace>}:bull:`):
 *
 * - the trigger queue: refresh requests for a registered source (from a webhook) and auto-save
 *   requests (from agent hooks). A refresh is debounced and de-duplicated per source: its
 *   deduplication id is derived from the source's lock key, the job waits `debounceMs`, and every
 *   new request while it waits pushes it back (`reschedule`); one arriving while a refresh runs is
 *   kept and runs after it (`keepLastIfActive`). Auto-saves carry a deterministic job id (agent,
 *   session, message count), so a hook firing twice for the same state files once. The handler of
 *   a refresh starts the mine workflow through the JobEngine port;
 * - the notification queue: one event per finished, failed or cancelled job, with a deterministic
 *   id per (job, state), so a retried publish never notifies twice.
 *
 * Both retry with exponential backoff; what exhausts its attempts stays in the failed set (the
 * dead letters), which `deadLetters()` lists and `retryDeadLetter(id)` puts back in the queue.
 */
import type { ConnectionOptions, Job, JobsOptions } from 'bullmq';
import { Queue, UnrecoverableError, Worker } from 'bullmq';
import { invalidArgument, isPalaceError } from '../../../core/errors.js';
import { hashN } from '../../../core/text.js';
import type { CheckpointInput } from '../../../palace/drawers/checkpoint.js';
import type { JobEngine, JobProgress, MineSpec } from '../../job.js';
import type { SessionSave } from '../../../palace/hooks/session-save.js';
import { lockKey } from '../../job.js';
import type { DeliveryOutcome, DeliveryProgress, DeliveryRecord, JobNotification } from '../../../palace/hooks/notifications.js';
import { jobNotification } from '../../../palace/hooks/notifications.js';
import { palacePrefix, redisServerOptions } from '../../../stores/shared/redis-address.js';
import type { DeadLetter as PalaceDeadLetter } from '../../../palace/hooks/notifications.js';
import { processTraced, sendTraced } from './queue-tracing.js';

export const TRIGGER_QUEUE = 'triggers';
export const NOTIFICATION_QUEUE = 'job-notifications';

export interface QueueSettings {
  /** `redis://[user:password@]host:port[/db]` (config.redis.url). */
  redisUrl: string;
  /** Palace name: the hash tag of every key (config.palaceName). */
  palaceName: string;
  /** Attempts before a job becomes a dead letter; default 8. */
  attempts?: number;
  /** First retry delay, doubled per attempt; default 2 000 ms. */
  backoffMs?: number;
  /**
   * Told of a consumer's own errors (a lost Redis connection, a failed fetch), which are not any
   * job's: job failures are recorded on the job. Unset: those errors are dropped.
   */
  onWorkerError?: (queue: string, error: Error) => void;
}

/** A dead letter of one queue (the palace-level record adds the queue's name). */
export type DeadLetter = Omit<PalaceDeadLetter, 'queue'>;

/** `sourceId`: a registered source's refresh (webhook); its handler waits for the mine to end. */
export type RefreshRequest = { spec: MineSpec; sourceId?: string };
export interface AutoSaveRequest {
  agent: string;
  sessionId: string;
  /** Messages in the session when the hook fired (the hook's own counter). */
  messages: number;
  /** What to file: the checkpoint tool's input (items and diary). */
  checkpoint: CheckpointInput;
  /** An agent hook's new session exchanges, filed verbatim before the checkpoint. */
  session?: SessionSave;
}
export type TriggerData = ({ kind: 'refresh' } & RefreshRequest) | ({ kind: 'auto_save' } & AutoSaveRequest);

export type { JobNotification };

/** BullMQ connection options from a Redis URL (blocking workers need unlimited retries). */
export function bullConnection(redisUrl: string): ConnectionOptions {
  return { ...redisServerOptions(redisUrl), maxRetriesPerRequest: null };
}

function bullPrefix(palaceName: string): string {
  return `${palacePrefix(palaceName)}bull`;
}

class PalaceQueue<D> {
  readonly queue: Queue<D>;
  protected readonly defaults: JobsOptions;

  constructor(name: string, readonly settings: QueueSettings) {
    this.queue = new Queue<D>(name, { connection: bullConnection(settings.redisUrl), prefix: bullPrefix(settings.palaceName) });
    this.defaults = {
      attempts: settings.attempts ?? 8,
      backoff: { type: 'exponential', delay: settings.backoffMs ?? 2_000 },
      // Completed jobs stay a day, so a deterministic id repeated within it is a no-op; failed
      // jobs stay until retried or cleaned: they are the dead letters.
      removeOnComplete: { age: 24 * 3600 },
      removeOnFail: false,
    };
  }

  async deadLetters(start = 0, end = 99): Promise<DeadLetter[]> {
    const failed = await this.queue.getFailed(start, end);
    return failed.map((j) => ({ id: j.id!, name: j.name, data: j.data, failedReason: j.failedReason, attemptsMade: j.attemptsMade, finishedOn: j.finishedOn }));
  }

  /** Put a dead letter back in the queue with a fresh set of attempts. */
  async retryDeadLetter(id: string): Promise<void> {
    const job = await this.queue.getJob(id);
    if (!job) throw invalidArgument('id', 'dead_letter_exists', `no job ${id} in queue ${this.queue.name}`);
    if (!(await job.isFailed())) throw invalidArgument('id', 'dead_letter_failed', `job ${id} in queue ${this.queue.name} is not a dead letter`);
    await job.retry('failed', { resetAttemptsMade: true });
  }

  /** Jobs per state (waiting, active, delayed, failed = dead letters), for metrics and the dashboard. */
  async depths(): Promise<Record<string, number>> {
    return this.queue.getJobCounts('waiting', 'active', 'delayed', 'failed');
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}

export class TriggerQueue extends PalaceQueue<TriggerData> {
  constructor(settings: QueueSettings, private readonly debounceMs = 30_000, private readonly maxWaitMs = 300_000) {
    super(TRIGGER_QUEUE, settings);
  }

  private redisKey(...parts: string[]): string {
    return `${palacePrefix(this.settings.palaceName)}${parts.join(':')}`;
  }

  /**
   * Ask for a mine of a registered source; requests within the debounce window become one. The
   * first request of a window records its time (a key living for the maximum wait plus one
   * debounce), so a later request's delay never reaches past `maxWaitMs` after it.
   */
  async requestRefresh(req: RefreshRequest, debounceMs = this.debounceMs): Promise<{ id: string }> {
    const dedupe = `refresh-${hashN(req.sourceId ?? lockKey(this.settings.palaceName, req.spec), 24)}`;
    const client = await this.queue.getBackend().client;
    const firstKey = this.redisKey('refresh_first', dedupe);
    const now = Date.now();
    await client.runCommand('set', [firstKey, String(now), 'PX', this.maxWaitMs + debounceMs, 'NX']);
    const first = Number((await client.get(firstKey)) ?? now);
    const delay = Math.max(0, Math.min(debounceMs, first + this.maxWaitMs - now));
    const job = await sendTraced(TRIGGER_QUEUE, 'refresh', { kind: 'refresh' as const, ...req }, (data) =>
      this.queue.add('refresh', data, {
        ...this.defaults,
        delay,
        deduplication: { id: dedupe, reschedule: true, keepLastIfActive: true },
      }));
    return { id: job.id! };
  }

  /** Remember a webhook delivery's keys for `windowMs` (shared by every API replica): false when any was seen. */
  async claimDelivery(keys: readonly string[], windowMs: number): Promise<boolean> {
    const client = await this.queue.getBackend().client;
    const claimed: string[] = [];
    for (const k of keys) {
      const key = this.redisKey('webhook_delivery', k);
      if ((await client.runCommand('set', [key, '1', 'PX', windowMs, 'NX'])) !== 'OK') {
        if (claimed.length > 0) await client.del(...claimed);
        return false;
      }
      claimed.push(key);
    }
    return true;
  }

  async releaseDelivery(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    const client = await this.queue.getBackend().client;
    await client.del(...keys.map((k) => this.redisKey('webhook_delivery', k)));
  }

  /** Ask for a session checkpoint to be filed; the same (agent, session, messages) files once. */
  async requestAutoSave(req: AutoSaveRequest): Promise<{ id: string }> {
    if (!Number.isInteger(req.messages) || req.messages < 0)
      throw invalidArgument('messages', 'non_negative_integer', 'messages must be a non-negative integer');
    const id = `autosave-${hashN(JSON.stringify([req.agent, req.sessionId, req.messages]), 24)}`;
    const job = await sendTraced(TRIGGER_QUEUE, 'auto_save', { kind: 'auto_save' as const, ...req },
      (data) => this.queue.add('auto_save', data, { ...this.defaults, jobId: id }));
    return { id: job.id! };
  }
}

export class NotificationQueue extends PalaceQueue<JobNotification> {
  constructor(settings: QueueSettings) {
    super(NOTIFICATION_QUEUE, settings);
  }

  /** Publish a job's end; publishing the same job and state again is a no-op. */
  async publish(p: JobProgress): Promise<void> {
    if (p.state === 'running') return;
    const name = `job_${p.state}`;
    await sendTraced(NOTIFICATION_QUEUE, name, jobNotification(p),
      (data) => this.queue.add(name, data, { ...this.defaults, jobId: `job-${p.job_id.replace(/:/g, '-')}-${p.state}` }));
  }

  /** The newest deliveries (finished, failed or waiting for a retry), for the dashboard. */
  async recentDeliveries(limit: number): Promise<DeliveryRecord[]> {
    const jobs = await this.queue.getJobs(['active', 'delayed', 'waiting', 'failed', 'completed'], 0, Math.max(0, limit - 1), false);
    const records = await Promise.all(jobs.filter((j): j is Job<JobNotification> => Boolean(j?.id)).map(async (j): Promise<DeliveryRecord> => {
      const progress = (typeof j.progress === 'object' && j.progress ? j.progress : { delivered: [] }) as DeliveryProgress;
      const state = await j.getState();
      return {
        id: j.id!,
        job_id: j.data.job_id,
        kind: j.data.kind,
        state: j.data.state,
        status: state === 'completed' ? 'delivered' : state === 'failed' ? 'dead' : 'pending',
        attempts: j.attemptsMade,
        delivered: progress.delivered ?? [],
        ...(j.failedReason ? { error: j.failedReason } : {}),
        updated_at: new Date(j.finishedOn ?? j.processedOn ?? j.timestamp).toISOString(),
      };
    }));
    return records.sort((a, b) => (b.updated_at ?? '').localeCompare(a.updated_at ?? '')).slice(0, limit);
  }
}

export interface TriggerHandlers {
  refresh(req: RefreshRequest): Promise<unknown>;
  autoSave(req: AutoSaveRequest): Promise<unknown>;
}

/**
 * A refresh handler that starts the mine on the job engine. A mine already running on the source
 * is retried with backoff (the refresh must see files changed after that mine scanned); any
 * other error is retried only when it is `retryable`.
 */
export function refreshWithJobEngine(engine: JobEngine): TriggerHandlers['refresh'] {
  return async ({ spec }) => {
    try {
      const started = await engine.start(spec);
      return { job_id: started.job_id };
    } catch (e) {
      if (isPalaceError(e) && !e.retryable && e.code !== 'already_running') throw new UnrecoverableError(e.message);
      throw e;
    }
  };
}

function workerFor<D>(name: string, settings: QueueSettings, concurrency: number, handle: (job: Job<D>) => Promise<unknown>): Worker<D> {
  const worker = new Worker<D>(name, processTraced(name, handle), { connection: bullConnection(settings.redisUrl), prefix: bullPrefix(settings.palaceName),
    concurrency });
  const onError = settings.onWorkerError;
  worker.on('error', (e: Error) => onError?.(name, e));
  return worker;
}

export function startTriggerWorker(settings: QueueSettings, handlers: TriggerHandlers, concurrency = 4): Worker<TriggerData> {
  return workerFor<TriggerData>(TRIGGER_QUEUE, settings, concurrency, async (job) => {
    const data = job.data;
    return data.kind === 'refresh' ? handlers.refresh({ spec: data.spec, ...(data.sourceId ? { sourceId: data.sourceId } : {}) }) : handlers.autoSave(data);
  });
}

/**
 * The notification consumer: delivers each job end with `deliver`, keeping what it achieved in
 * the job's progress, so a retry (backoff, or a dead letter retried) repeats only the failed URLs.
 */
export function startNotificationDeliveryWorker(settings: QueueSettings,
  deliver: (event: JobNotification, progress: DeliveryProgress) => Promise<DeliveryOutcome>, onFailure: (outcome: DeliveryOutcome) => Error,
  concurrency = 4): Worker<JobNotification> {
  return workerFor<JobNotification>(NOTIFICATION_QUEUE, settings, concurrency, async (job) => {
    const before = (typeof job.progress === 'object' && job.progress ? job.progress : { delivered: [] }) as DeliveryProgress;
    const outcome = await deliver(job.data, before);
    const { failed, ...progress } = outcome;
    await job.updateProgress(progress);
    if (failed.length > 0) throw onFailure(outcome);
    return progress;
  });
}
