/**
 * `/v1/sources`: the registered sources (list, add, get, remove, refresh now), and the short
 * jobs' outcomes: `GET /v1/notifications` (recent deliveries and dead letters) and
 * `POST /v1/dead-letters/{queue}/{id}/retry`. Reading needs the read scope, changing the write scope;
 * notification URLs are shown whole to admin tokens only (palace/hooks/notifications.ts).
 */
import type { Request, Router } from 'express';
import { jobStarted } from '../../jobs/operations.js';
import type { AddSourceInput } from '../../palace/sources/registered-sources.js';
import { notificationsFor } from '../../palace/hooks/notifications.js';
import { addSource, getSource, listSources, removeSource, sourcesContext, startRefresh } from '../../palace/sources/registered-sources.js';
import { sourcePolicy } from '../../palace/sources/sources.js';
import { hasScope } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { ADD_SOURCE_REQUEST, LIST_QUERY } from '../requests.js';
import { validBody, validQuery } from '../validate.js';

export function registerSourceRoutes(router: Router, deps: ApiDeps): void {
  const ctx = (req: Request) => {
    const rt = deps.runtimeFor(req);
    return sourcesContext(rt, sourcePolicy(rt.config, { tokenRoots: deps.caller(req).roots }));
  };

  router.get('/v1/sources', deps.authorize, async (req, res) => {
    res.json({ sources: await listSources(ctx(req)) });
  });

  router.post('/v1/sources', deps.authorize, async (req, res) => {
    const body = validBody<AddSourceInput>(ADD_SOURCE_REQUEST, req.body);
    const source = await addSource(ctx(req), body, deps.caller(req).identity);
    res.status(201).location(`/v1/sources/${source.source_id}`).json(source);
  });

  router.get('/v1/sources/:id', deps.authorize, async (req, res) => {
    res.json(await getSource(ctx(req), req.params.id as string));
  });

  router.delete('/v1/sources/:id', deps.authorize, async (req, res) => {
    res.json(await removeSource(ctx(req), req.params.id as string));
  });

  router.post('/v1/sources/:id/refresh', deps.authorize, async (req, res) => {
    const started = await startRefresh(ctx(req), req.params.id as string);
    res.status(202).location(`/v1/jobs/${started.job_id}`).json(jobStarted(started));
  });

  router.get('/v1/notifications', deps.authorize, async (req, res) => {
    const { limit } = validQuery<{ limit?: number }>(LIST_QUERY, req.query);
    const notifications = deps.runtime().notifications;
    const view = { deliveries: await notifications.recentDeliveries(limit ?? 20), dead_letters: await notifications.deadLetters() };
    res.json(notificationsFor(view, hasScope(deps.caller(req), 'admin')));
  });

  router.post('/v1/dead-letters/:queue/:id/retry', deps.authorize, async (req, res) => {
    const queue = req.params.queue as string;
    const id = req.params.id as string;
    await deps.runtime().notifications.retryDeadLetter(queue, id);
    res.json({ retried: id, queue });
  });
}
