/**
 * `/v1/sources`: the registered sources (list, add, get, remove, refresh now), and the short
 * jobs' outcomes: `GET /v1/notifications` (recent deliveries and dead letters) and
 * `POST /v1/dead-letters/{queue}/{id}/retry`. Reading needs the read scope, changing the write scope.
 */
import type { Router } from 'express';
import type { AddSourceInput } from '../../palace/sources.js';
import { addSource, getSource, listSources, removeSource, startRefresh } from '../../palace/sources.js';
import type { ApiDeps } from '../deps.js';
import { validBody, validQuery } from '../validate.js';

export function registerSourceRoutes(router: Router, deps: ApiDeps): void {
  const ctx = () => {
    const rt = deps.runtime();
    return { store: rt.stores.jobs, jobs: rt.jobs, allowedRoots: rt.config.allowedRoots };
  };

  router.get('/v1/sources', deps.requireScope('read'), async (_req, res) => {
    res.json({ sources: await listSources(ctx()) });
  });

  router.post('/v1/sources', deps.requireScope('write'), async (req, res) => {
    const body = validBody<AddSourceInput>('AddSourceRequest', req.body);
    const source = await addSource(ctx(), body, deps.caller(req).identity);
    res.status(201).location(`/v1/sources/${source.source_id}`).json(source);
  });

  router.get('/v1/sources/:id', deps.requireScope('read'), async (req, res) => {
    res.json(await getSource(ctx(), req.params.id as string));
  });

  router.delete('/v1/sources/:id', deps.requireScope('write'), async (req, res) => {
    res.json(await removeSource(ctx(), req.params.id as string));
  });

  router.post('/v1/sources/:id/refresh', deps.requireScope('write'), async (req, res) => {
    const started = await startRefresh(ctx(), req.params.id as string);
    const { result: _result, ...progress } = started;
    res.status(202).location(`/v1/jobs/${started.job_id}`).json({ job_id: started.job_id, progress, events_url: `/v1/jobs/${started.job_id}/events` });
  });

  router.get('/v1/notifications', deps.requireScope('read'), async (req, res) => {
    const { limit } = validQuery<{ limit?: number }>('JobListQuery', req.query);
    const notifications = deps.runtime().notifications;
    res.json({ deliveries: await notifications.recentDeliveries(limit ?? 20), dead_letters: await notifications.deadLetters() });
  });

  router.post('/v1/dead-letters/:queue/:id/retry', deps.requireScope('write'), async (req, res) => {
    const queue = req.params.queue as string;
    const id = req.params.id as string;
    await deps.runtime().notifications.retryDeadLetter(queue, id);
    res.json({ retried: id, queue });
  });
}
