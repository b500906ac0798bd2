/**
 * Delivering one job end: append the `job.finished` event to the logstream (once: an event
 * already there for the job is reused) and POST the notification as JSON to every configured
 * URL that has not yet answered 2xx, signed with HMAC-SHA256 over the exact body
 * (`X-Mempalace-Signature-256: sha256=<hex>`, the scheme GitHub uses for its webhooks). The
 * caller keeps the returned progress across retries, so a retry only repeats what failed.
 */
import { createHmac } from 'node:crypto';
import { invalidArgument } from '../core/errors.js';
import { eventDraft } from '../palace/logstream/validate.js';
import type { DeliveryOutcome, DeliveryProgress, JobNotification } from '../palace/hooks/notifications.js';
import { JOB_EVENTS } from '../palace/hooks/notifications.js';
import type { Logstream } from '../stores/ports/logstream/local-log.js';

const SIGNATURE_HEADER = 'x-mempalace-signature-256';

export interface NotifyDeps {
  palace: string;
  urls: readonly string[];
  secret: string | undefined;
  logstream: Logstream;
  /** Per request; default 10 s. */
  timeoutMs?: number;
}

export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/** Refuses URLs that are not http(s) and a URL list without a signing secret, before anything is sent. */
export function checkNotifySettings(urls: readonly string[], secret: string | undefined): void {
  for (const u of urls) {
    let url: URL | undefined;
    try {
      url = new URL(u);
    } catch {
      url = undefined;
    }
    if (!url || !['http:', 'https:'].includes(url.protocol))
      throw invalidArgument('MEMPALACE_NOTIFY_URLS', 'http_url', `notification URL '${u}' is not an http(s) URL`);
  }
  if (urls.length > 0 && !secret)
    throw invalidArgument('MEMPALACE_NOTIFY_SECRET', 'required',
      'MEMPALACE_NOTIFY_URLS is set but neither MEMPALACE_NOTIFY_SECRET nor MEMPALACE_WEBHOOK_SECRET is: notifications would be unsigned');
}

async function jobFinishedEvent(deps: NotifyDeps, n: JobNotification): Promise<string> {
  const [existing] = await deps.logstream.list({ stream: JOB_EVENTS.stream, room: JOB_EVENTS.room, type: JOB_EVENTS.type, correlation_id: n.job_id,
    order: 'desc', limit: 1 });
  if (existing) return existing.id;
  const body = `${n.kind} job ${n.job_id}${n.wing ? ` (wing ${n.wing})` : ''} ${n.state}: ${n.files_seen} files seen, ${n.drawers_written} drawers written${
    n.error ? ` — ${n.error}` : ''
  }`;
  const event = await deps.logstream.append(eventDraft({
    type: JOB_EVENTS.type,
    stream: JOB_EVENTS.stream,
    room: JOB_EVENTS.room,
    topic: n.kind,
    from_agent: JOB_EVENTS.from_agent,
    correlation_id: n.job_id,
    status: n.state === 'failed' ? 'failed' : null,
    body,
    metadata: n,
  }));
  return event.id;
}

async function post(deps: NotifyDeps, url: string, body: string, deliveryId: string): Promise<string | undefined> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'mempalace-notify',
        'x-mempalace-event': JOB_EVENTS.type,
        'x-mempalace-delivery': deliveryId,
        [SIGNATURE_HEADER]: signature(deps.secret!, body),
      },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(deps.timeoutMs ?? 10_000),
    });
    await res.arrayBuffer().catch(() => undefined);
    return res.status >= 200 && res.status < 300 ? undefined : `HTTP ${res.status}`;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

export async function deliverJobEnd(deps: NotifyDeps, n: JobNotification, progress: DeliveryProgress): Promise<DeliveryOutcome> {
  checkNotifySettings(deps.urls, deps.secret);
  const event_id = progress.event_id ?? (await jobFinishedEvent(deps, n));
  const deliveryId = `${n.job_id}:${n.state}`;
  const body = JSON.stringify({ type: JOB_EVENTS.type, delivery_id: deliveryId, palace: deps.palace, event_id, ...n });
  const pending = deps.urls.filter((u) => !progress.delivered.includes(u));
  const results = await Promise.all(pending.map(async (url) => ({ url, error: await post(deps, url, body, deliveryId) })));
  return {
    event_id,
    delivered: [...progress.delivered, ...results.filter((r) => r.error === undefined).map((r) => r.url)],
    failed: results.flatMap((r) => (r.error === undefined ? [] : [{ url: r.url, error: r.error }])),
  };
}
