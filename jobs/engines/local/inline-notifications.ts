/**
 * The embedded profile's notifications, delivered in this process: each job end is delivered at
 * once and retried with exponential backoff; one that exhausts its attempts is kept as a dead
 * letter until retried. The records live in memory (the last 200), so deliveries still pending
 * when the process exits are not retried by the next one — the cluster's queue survives that.
 */
import type { JobProgress } from '../../job.js';
import type { DeadLetter, DeliveryOutcome, DeliveryProgress, DeliveryRecord, JobNotification, Notifications } from '../../../palace/hooks/notifications.js';
import { deliveryError, jobNotification } from '../../../palace/hooks/notifications.js';
import { invalidArgument } from '../../../core/errors.js';

export const INLINE_QUEUE = 'notification';
const KEEP = 200;

interface Entry {
  id: string;
  notification: JobNotification;
  progress: DeliveryProgress;
  attempts: number;
  status: 'active' | 'delayed' | 'delivered' | 'dead';
  error?: string;
  updatedAt: number;
  timer?: NodeJS.Timeout;
  running?: Promise<void>;
}

export class InlineNotifications implements Notifications {
  private readonly entries = new Map<string, Entry>();
  private closed = false;

  constructor(
    private readonly deliver: (n: JobNotification, p: DeliveryProgress) => Promise<DeliveryOutcome>,
    private readonly opts: { attempts: number; backoffMs: number },
  ) {}

  /** A job's end; the same job and state again is a no-op. */
  publish(p: JobProgress): void {
    if (p.state === 'running' || this.closed) return;
    const id = `job-${p.job_id.replace(/:/g, '-')}-${p.state}`;
    if (this.entries.has(id)) return;
    const entry: Entry = { id, notification: jobNotification(p), progress: { delivered: [] }, attempts: 0, status: 'active', updatedAt: Date.now() };
    this.entries.set(id, entry);
    this.prune();
    this.attempt(entry);
  }

  private prune(): void {
    for (const [id, e] of this.entries) {
      if (this.entries.size <= KEEP) break;
      if (e.status === 'delivered') this.entries.delete(id);
    }
  }

  private attempt(entry: Entry): void {
    entry.status = 'active';
    entry.running = (async () => {
      entry.attempts += 1;
      try {
        const outcome = await this.deliver(entry.notification, entry.progress);
        const { failed, ...progress } = outcome;
        entry.progress = progress;
        if (failed.length > 0) throw deliveryError(outcome);
        entry.status = 'delivered';
        delete entry.error;
      } catch (e) {
        entry.error = e instanceof Error ? e.message : String(e);
        if (entry.attempts >= this.opts.attempts || this.closed) entry.status = 'dead';
        else {
          entry.status = 'delayed';
          entry.timer = setTimeout(() => this.attempt(entry), this.opts.backoffMs * 2 ** (entry.attempts - 1));
        }
      } finally {
        entry.updatedAt = Date.now();
        entry.running = undefined;
      }
    })();
  }

  async deadLetters(): Promise<DeadLetter[]> {
    return [...this.entries.values()].filter((e) => e.status === 'dead').map((e) => ({
      queue: INLINE_QUEUE,
      id: e.id,
      name: `job_${e.notification.state}`,
      data: e.notification,
      failedReason: e.error ?? '',
      attemptsMade: e.attempts,
      finishedOn: e.updatedAt,
    }));
  }

  async retryDeadLetter(queue: string, id: string): Promise<void> {
    if (queue !== INLINE_QUEUE) throw invalidArgument('queue', 'one_of', `queue must be ${INLINE_QUEUE} on the embedded profile`);
    const entry = this.entries.get(id);
    if (!entry) throw invalidArgument('id', 'dead_letter_exists', `no job ${id} in queue ${queue}`);
    if (entry.status !== 'dead') throw invalidArgument('id', 'dead_letter_failed', `job ${id} in queue ${queue} is not a dead letter`);
    entry.attempts = 0;
    this.attempt(entry);
  }

  async recentDeliveries(limit: number): Promise<DeliveryRecord[]> {
    return [...this.entries.values()].sort((a, b) => b.updatedAt - a.updatedAt).slice(0, limit).map((e) => ({
      id: e.id,
      job_id: e.notification.job_id,
      kind: e.notification.kind,
      state: e.notification.state,
      status: e.status === 'delivered' ? 'delivered' : e.status === 'dead' ? 'dead' : 'pending',
      attempts: e.attempts,
      delivered: e.progress.delivered,
      ...(e.error && e.status !== 'delivered' ? { error: e.error } : {}),
      updated_at: new Date(e.updatedAt).toISOString(),
    }));
  }

  /** Stop retrying; wait for deliveries in flight. */
  async close(): Promise<void> {
    this.closed = true;
    for (const e of this.entries.values()) clearTimeout(e.timer);
    await Promise.all([...this.entries.values()].map((e) => e.running));
  }
}
