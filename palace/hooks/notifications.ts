/**
 * Job-end notifications: what is told when a job finishes, fails or is cancelled, how a delivery
 * went, and the `Notifications` port the API and dashboard read (dead letters, recent
 * deliveries, a retry). The cluster implements it over the BullMQ notification queue, the
 * embedded profile in-process; the delivery itself (outbound POSTs and the `job.finished`
 * logstream event) is jobs/notify.ts.
 */
import type { JobProgress } from '../../stores/ports/job-engine.js';

/** Where job ends appear in the logstream, so agents can `event_wait` on a job (correlation_id = job id). */
export const JOB_EVENTS = { stream: 'ops', room: 'jobs', type: 'job.finished', from_agent: 'mempalace' } as const;

export interface JobNotification {
  job_id: string;
  kind: JobProgress['kind'];
  state: JobProgress['state'];
  lock_key: string;
  finished_at: string | undefined;
  files_seen: number;
  drawers_written: number;
  error?: string;
  /** What the job worked on and what started it (absent where its record lacks them). */
  source?: string;
  ref?: string;
  wing?: string;
  mode?: JobProgress['mode'];
  trigger?: JobProgress['trigger'];
}

export function jobNotification(p: JobProgress): JobNotification {
  const subject = { source: p.source, ref: p.ref, wing: p.wing, mode: p.mode, trigger: p.trigger };
  return {
    job_id: p.job_id,
    kind: p.kind,
    state: p.state,
    lock_key: p.lock_key,
    finished_at: p.finished_at,
    files_seen: p.files_seen,
    drawers_written: p.drawers_written,
    ...(p.error === undefined ? {} : { error: p.error }),
    ...Object.fromEntries(Object.entries(subject).filter(([, v]) => v !== undefined)),
  };
}

/** What a notification's delivery has done so far; kept across its retries so none is repeated. */
export interface DeliveryProgress {
  /** URLs that answered 2xx. */
  delivered: string[];
  /** The `job.finished` event appended for it. */
  event_id?: string;
}

export interface DeliveryOutcome extends DeliveryProgress {
  failed: { url: string; error: string }[];
}

/** The error a failed delivery is retried with: which URLs failed and how. */
export function deliveryError(outcome: DeliveryOutcome): Error {
  return new Error(`notification not delivered to ${outcome.failed.map((f) => `${f.url} (${f.error})`).join(', ')}`);
}

/** One notification's delivery as the dashboard lists it. */
export interface DeliveryRecord {
  id: string;
  job_id: string;
  kind: string;
  state: string;
  /** pending: waiting for a retry; dead: out of attempts (a dead letter). */
  status: 'delivered' | 'pending' | 'dead';
  attempts: number;
  delivered: string[];
  error?: string;
  updated_at: string | undefined;
}

export interface DeadLetter {
  queue: string;
  id: string;
  name: string;
  data: unknown;
  failedReason: string;
  attemptsMade: number;
  finishedOn: number | undefined;
}

export interface Notifications {
  /** Dead letters of every short-job queue of the profile. */
  deadLetters(): Promise<DeadLetter[]>;
  /** Put a dead letter back with a fresh set of attempts. */
  retryDeadLetter(queue: string, id: string): Promise<void>;
  /** Newest first. */
  recentDeliveries(limit: number): Promise<DeliveryRecord[]>;
}

/** Recent deliveries and dead letters, as the API and the dashboard show them. */
export interface NotificationsView {
  deliveries: DeliveryRecord[];
  dead_letters: DeadLetter[];
}

const URL_IN_TEXT = /\bhttps?:\/\/[^\s,()"'<>]+/gi;

/** Scheme, host and port of a URL: its path and query (where webhook URLs keep their secret) left out. */
export function urlOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '[redacted]';
  }
}

function originsOnly(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(URL_IN_TEXT, urlOrigin);
  if (Array.isArray(value)) return value.map(originsOnly);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, originsOnly(v)]));
  return value;
}

/**
 * What a caller may see of the notifications: an admin the whole URLs (which may embed a secret,
 * as chat webhooks do), anyone else every URL — delivered lists, errors, dead letters — reduced
 * to its scheme and host.
 */
export function notificationsFor(view: NotificationsView, admin: boolean): NotificationsView {
  return admin ? view : (originsOnly(view) as NotificationsView);
}
