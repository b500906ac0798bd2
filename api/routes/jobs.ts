/**
 * `/v1/jobs`: start mine / sync / delete_by_source (202 with the job id; 409 when a job already
 * runs on the source), list, get, cancel, and each job's progress as Server-Sent Events read
 * from the job store (so any replica can serve them), resumable with Last-Event-ID.
 */
import type { Router } from 'express';
import { invalidArgument } from '../../core/errors.js';
import { progressView } from '../../jobs/job.js';
import { startDeleteBySourceOperation, startMineOperation, startSyncOperation } from '../../jobs/operations.js';
import { registerRoutes, routeOf } from '../bind.js';
import type { ApiDeps } from '../deps.js';
import { sseOverCapacity } from '../limits.js';
import { LIST_QUERY } from '../requests.js';
import { SseStream, sleep } from '../sse.js';
import { validQuery } from '../validate.js';

const started = { location: (r: { job_id: string }) => `/v1/jobs/${r.job_id}`, conflict: 'A job already runs on this source; job_id names it.' };

/**
 * Starting a job is a binding of the job operations (jobs/operations.ts) with the request model
 * of its kind: the MCP tools' input, and for a mine also the git ref and the gitignore overrides
 * the tool does not offer. A mine that names no agent files under the token's identity unless
 * the token is admin; an agent named must be the token's.
 */
export const JOB_ROUTES = [
  routeOf({ method: 'post', path: '/v1/jobs/mine', summary: 'Start mining a directory or git repository.', tag: 'jobs', from: 'body',
    operation: startMineOperation, options: undefined, accepted: started, ownIdentity: true }),
  routeOf({ method: 'post', path: '/v1/jobs/sync', summary: 'Start a sync (prune stale drawers; dry run unless apply).', tag: 'jobs', from: 'body',
    operation: startSyncOperation, options: undefined, accepted: started, ownIdentity: true }),
  routeOf({ method: 'post', path: '/v1/jobs/delete_by_source', summary: 'Start a delete of every drawer from one source (dry run unless dry_run is false).',
    tag: 'jobs', from: 'body', operation: startDeleteBySourceOperation, options: undefined, accepted: started, ownIdentity: true }),
] as const;

export function registerJobRoutes(router: Router, deps: ApiDeps): void {
  registerRoutes(router, deps, JOB_ROUTES);

  router.get('/v1/jobs', deps.authorize, async (req, res) => {
    const { limit } = validQuery<{ limit?: number }>(LIST_QUERY, req.query);
    res.json({ jobs: (await deps.runtimeFor(req).jobs.list(limit ?? 20)).map(progressView) });
  });

  router.get('/v1/jobs/:id', deps.authorize, async (req, res) => {
    res.json(await deps.runtimeFor(req).jobs.progress(req.params.id as string));
  });

  router.post('/v1/jobs/:id/cancel', deps.authorize, async (req, res) => {
    const jobs = deps.runtimeFor(req).jobs;
    const id = req.params.id as string;
    await jobs.progress(id);
    res.json(progressView(await jobs.cancel(id)));
  });

  router.get('/v1/jobs/:id/events', deps.authorize, async (req, res) => {
    const id = req.params.id as string;
    await deps.runtimeFor(req).jobs.progress(id);
    const header = req.headers['last-event-id'];
    let after = 0;
    if (header !== undefined && header !== '') {
      if (typeof header !== 'string' || !/^\d{1,15}$/.test(header.trim()))
        throw invalidArgument('Last-Event-ID', 'non_negative_integer', 'Last-Event-ID must be a progress sequence number from this stream');
      after = Number(header.trim());
    }
    if (!deps.sse.tryAcquire()) return sseOverCapacity(res);
    const stream = new SseStream(req, res, () => deps.sse.release());
    try {
      while (!stream.closed) {
        const rt = deps.runtimeFor(req);
        const rows = await rt.stores.jobs.events(id, after, 100);
        for (const row of rows) {
          stream.send('progress', row.progress, row.seq);
          after = row.seq;
        }
        if (rows.length === 100) continue;
        const current = await rt.jobs.progress(id);
        if (current.state !== 'running' && (await rt.stores.jobs.events(id, after, 1)).length === 0) {
          stream.send('end', progressView(current));
          break;
        }
        await sleep(deps.pollMs, stream.signal);
      }
    } catch (e) {
      stream.sendError(e);
    } finally {
      stream.end();
    }
  });
}
