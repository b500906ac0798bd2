/**
 * The ops dashboard: its static page at `/dashboard` (no data in it, so it is served without a
 * token) and `GET /v1/dashboard/stream`, one SSE stream multiplexing what the page shows:
 * `jobs` (recent jobs with progress, the rate series of running ones and their Temporal links,
 * api/dashboard-jobs.ts), `stats` (palace counts), `metrics` (the last hour of this server's
 * search and tool latencies and errors, api/metrics-history.ts), `health` (per engine) and
 * `logstream` (the newest events, then a live tail). Job, stats and health frames are read from
 * the stores on a timer and sent only when they changed; the tail blocks on the logstream store.
 * Queue depths are a `queues` frame where the profile has queues (cluster); none is sent otherwise.
 * `sources` (registered sources with their last refresh) and `notifications` (recent job-end
 * deliveries and the dead letters) are sent on every profile. When a job ends, the stats and
 * sources frames are re-read at once rather than at their next tick, so the drawer counts
 * follow a finished mine without delay.
 *
 * The page asks for a read token and keeps it in sessionStorage; it reads the stream with
 * fetch() and an Authorization header (EventSource cannot send headers), so the token never
 * appears in a URL or a cookie and no CSRF surface exists.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import type { Router } from 'express';
import { asPalaceError } from '../../core/errors.js';
import { eventList, eventWait } from '../../palace/logstream/logstream.js';
import { notificationsFor } from '../../palace/hooks/notifications.js';
import { listSources } from '../../palace/sources/registered-sources.js';
import { palaceCounts } from '../../palace/system/status.js';
import { JobRates, dashboardJobs } from '../dashboard-jobs.js';
import type { ApiDeps } from '../deps.js';
import { healthReport } from '../health.js';
import { sseOverCapacity } from '../limits.js';
import type { DashboardEvent } from '../openapi.js';
import type { SseStream } from '../sse.js';
import { PING_AFTER_MS, SseStream as Stream, sleep } from '../sse.js';

const RECENT_EVENTS = 20;
const STATS_EVERY_MS = 3000;
const HEALTH_EVERY_MS = 5000;

/** The dashboard's files: next to this module in the source tree, or in the source tree when run from dist/. */
function dashboardDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.resolve(here, '..', 'dashboard'), path.resolve(here, '..', '..', '..', 'api', 'dashboard')];
  return candidates.find((c) => fs.existsSync(path.join(c, 'index.html'))) ?? candidates[0]!;
}

/** A sleep that another loop can cut short; a wake-up while not sleeping skips the next sleep. */
class Waker {
  private wakeUp: (() => void) | undefined;
  private pending = false;

  sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      this.wakeUp = done;
    });
  }

  wake(): void {
    if (this.wakeUp) this.wakeUp();
    else this.pending = true;
  }
}

/** Send `event` whenever what `read` returns differs (by `key`) from the last frame. */
async function pollLoop(stream: SseStream, event: DashboardEvent, everyMs: number, read: () => Promise<unknown>,
  key: (value: unknown) => string = (v) => JSON.stringify(v), waker?: Waker): Promise<void> {
  let last = '';
  while (!stream.closed) {
    let value: unknown;
    try {
      value = await read();
    } catch (e) {
      value = asPalaceError(e).toJSON();
    }
    const text = key(value);
    if (text !== last) {
      stream.send(event, value);
      last = text;
    }
    await (waker ? waker.sleep(everyMs, stream.signal) : sleep(everyMs, stream.signal));
  }
}

async function tailLoop(stream: SseStream, deps: ApiDeps): Promise<void> {
  const recent = (await eventList(deps.logstreamContext(), { order: 'desc', limit: RECENT_EVENTS, preview: true })).events.reverse();
  let cursor = recent.at(-1)?.id;
  const event: DashboardEvent = 'logstream';
  for (const e of recent) stream.send(event, e);
  while (!stream.closed) {
    try {
      const page = await eventWait(deps.logstreamContext(), { ...(cursor === undefined ? {} : { since_event_id: cursor }), timeout_ms: PING_AFTER_MS,
        limit: 100 }, stream.signal);
      for (const e of page.events) {
        stream.send(event, e);
        cursor = e.id;
      }
    } catch {
      await sleep(HEALTH_EVERY_MS, stream.signal);
    }
  }
}

/** Queue name → jobs waiting to run (waiting + delayed + active), plus dead letters where any. */
function queueFrame(deps: ApiDeps): () => Promise<{ queues: Record<string, number> }> {
  return async () => {
    const queues: Record<string, number> = {};
    for (const [name, s] of Object.entries((await deps.runtime().queueDepths?.()) ?? {})) {
      queues[name] = (s.waiting ?? 0) + (s.delayed ?? 0) + (s.active ?? 0);
      if (s.failed) queues[`${name} dead letters`] = s.failed;
    }
    return { queues };
  };
}

export function registerDashboardRoutes(router: Router, deps: ApiDeps): void {
  router.get('/v1/dashboard/stream', deps.authorize, async (req, res) => {
    if (!deps.sse.tryAcquire()) return sseOverCapacity(res);
    const stream = new Stream(req, res, () => deps.sse.release());
    const afterJobEnd = [new Waker(), new Waker()] as const;
    let seen: Map<string, string> | undefined;
    const rates = new JobRates((id, after, limit) => deps.runtime().stores.jobs.events(id, after, limit));
    const jobs = async () => {
      const rt = deps.runtimeFor(req);
      const list = await dashboardJobs(rt.config, await rt.jobs.list(10), rates);
      // A job that ended since the last read: one seen running, or one that started and ended in between.
      if (seen && list.some((j) => j.state !== 'running' && seen!.get(j.job_id) !== j.state)) { for (const w of afterJobEnd) w.wake(); }
      seen = new Map(list.map((j) => [j.job_id, j.state]));
      return { jobs: list };
    };
    const sources = async () => {
      const rt = deps.runtimeFor(req);
      return { sources: await listSources({ sources: rt.stores.sources, jobs: rt.jobs }) };
    };
    const notifications = async () => {
      const n = deps.runtime().notifications;
      return notificationsFor({ deliveries: await n.recentDeliveries(10), dead_letters: await n.deadLetters() }, deps.callerHas(req, 'admin'));
    };
    const stats = async () => {
      const rt = deps.runtimeFor(req);
      return { palace: rt.stores.palace, profile: rt.config.profile, ...(await palaceCounts(rt.stores.drawers)), sse_clients: deps.sse.count,
        sse_max_clients: deps.sse.max };
    };
    // Health is re-sent when a status changes, not for every latency wobble.
    const healthKey = (v: unknown) =>
      JSON.stringify(
        Object.entries((v as { engines?: Record<string, { status: string }> }).engines ?? v as object).map(([k, e]) => [k, (e as { status?: string }).status]),
      );
    try {
      await Promise.all([
        pollLoop(stream, 'jobs', deps.pollMs, jobs),
        pollLoop(stream, 'stats', STATS_EVERY_MS, stats, undefined, afterJobEnd[0]),
        pollLoop(stream, 'sources', STATS_EVERY_MS, sources, undefined, afterJobEnd[1]),
        pollLoop(stream, 'notifications', STATS_EVERY_MS, notifications),
        pollLoop(stream, 'metrics', STATS_EVERY_MS, async () => ({ minutes: deps.metrics.history.snapshot() })),
        pollLoop(stream, 'health', HEALTH_EVERY_MS, () => healthReport(deps.runtime()), healthKey),
        tailLoop(stream, deps),
        ...(deps.runtime().queueDepths ? [pollLoop(stream, 'queues', STATS_EVERY_MS, queueFrame(deps))] : []),
      ]);
    } finally {
      stream.end();
    }
  });
}

/** The static page, script and stylesheet. */
export function dashboardStatic(): Router {
  const router = express.Router();
  router.use('/dashboard', express.static(dashboardDir(), { index: 'index.html', fallthrough: true, maxAge: 0 }));
  return router;
}
