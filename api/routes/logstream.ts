/**
 * `GET /logstream/stream` (docs/logstream.md §7.2) and the replication routes `GET /sync/peers`,
 * `/sync/version_vector`, `/sync/ops`, `/sync/artifact` (docs/logstream.md §7.3, §8.9), bearer-protected like every
 * read route; bad parameters are `400 { error }`, an unknown artifact `404 { error }`.
 *
 * The stream is a loop of `event_wait` calls on the store (the Logstream port blocks on the
 * store's own notifications, never on this process's memory), each resuming after the last event
 * sent, in pages of at most 500. Filters and the cursor are validated by the first call, before
 * the response starts and before the capacity check.
 */
import type { Request, Response, Router } from 'express';
import { PalaceError, invalidArgument, isPalaceError } from '../../core/errors.js';
import { eventList, eventWait, meshPeers } from '../../palace/logstream/logstream.js';
import { versionVectorPayload } from '../../palace/logstream/estate.js';
import { syncArtifact, syncOps } from '../../palace/logstream/sync.js';
import type { ApiDeps } from '../deps.js';
import { sendPalaceError } from '../errors.js';
import { sseOverCapacity } from '../limits.js';
import { PING_AFTER_MS, SseStream } from '../sse.js';

export const LOGSTREAM_FILTERS = ['stream', 'room', 'topic', 'type', 'to_agent', 'from_agent', 'correlation_id', 'status'] as const;
const PAGE = 500;

/** The live-tail filters of the query; empty values are absent; a repeated parameter is refused. */
export function streamFilters(query: Request['query']): Record<string, string> {
  const filters: Record<string, string> = {};
  for (const name of [...LOGSTREAM_FILTERS, 'since_event_id']) {
    const value = query[name];
    if (value === undefined || value === '') continue;
    if (typeof value !== 'string') throw invalidArgument(name, 'single_value', `${name} must be given once`);
    filters[name] = value;
  }
  return filters;
}

export function registerLogstreamRoutes(router: Router, deps: ApiDeps): void {
  router.get('/logstream/stream', deps.authorize, async (req, res) => {
    const { since_event_id: sinceParam, ...filters } = streamFilters(req.query);
    const header = req.headers['last-event-id'];
    const ctx = deps.logstreamContext();
    let cursor = sinceParam ?? (typeof header === 'string' && header.trim() !== '' ? header.trim() : undefined);
    let first;
    try {
      if (cursor === undefined) cursor = (await eventList(ctx, { order: 'desc', limit: 1 })).events[0]?.id;
      first = await eventWait(ctx, { ...filters, ...(cursor === undefined ? {} : { since_event_id: cursor }), timeout_ms: 0, limit: PAGE });
    } catch (e) {
      // docs/logstream.md §7.2: a bad filter or an unknown cursor is 400 { error }, never a half-open stream.
      if (isPalaceError(e) && (e.code === 'invalid_argument' || e.code === 'not_found')) {
        sendPalaceError(res, new PalaceError('invalid_argument', e.message, { field: e.field, rule: e.rule }));
        return;
      }
      throw e;
    }
    if (!deps.sse.tryAcquire()) return sseOverCapacity(res);
    const stream = new SseStream(req, res, () => deps.sse.release());
    try {
      let events = first.events;
      while (!stream.closed) {
        for (const event of events) {
          stream.send('logstream', event, event.id);
          cursor = event.id;
        }
        const page = await eventWait(deps.logstreamContext(), { ...filters, ...(cursor === undefined ? {} : { since_event_id: cursor }),
          timeout_ms: events.length === PAGE ? 0 : PING_AFTER_MS, limit: PAGE }, stream.signal);
        events = page.events;
      }
    } catch (e) {
      if (!stream.closed) stream.sendError(e);
    } finally {
      stream.end();
    }
  });

  router.get('/sync/peers', deps.authorize, async (_req, res) => {
    res.json(await meshPeers(deps.logstreamContext()));
  });

  router.get('/sync/version_vector', deps.authorize, async (_req, res) => {
    const ctx = deps.logstreamContext();
    res.json(await versionVectorPayload(ctx.logstream, ctx.mesh));
  });

  const syncRoute = (handler: (query: Request['query']) => Promise<unknown>) => async (req: Request, res: Response) => {
    try {
      res.json(await handler(req.query));
    } catch (e) {
      if (isPalaceError(e) && (e.code === 'invalid_argument' || e.code === 'not_found')) {
        res.status(e.code === 'not_found' ? 404 : 400).json({ error: e.message });
        return;
      }
      throw e;
    }
  };
  router.get('/sync/ops', deps.authorize, syncRoute((query) => syncOps(deps.logstreamContext().logstream, query)));
  router.get('/sync/artifact', deps.authorize, syncRoute((query) => syncArtifact(deps.logstreamContext().logstream, query)));
}
