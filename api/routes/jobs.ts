/**
 * `/v1/jobs`: start mine / sync / delete_by_source (202 with the job id; 409 when a job already
 * runs on the source), list, get, cancel, and each job's progress as Server-Sent Events read
 * from the job store (so any replica can serve them), resumable with Last-Event-ID.
 */
import type { Request, Response, Router } from 'express';
import { invalidArgument } from '../../core/errors.js';
import { parseJobRequest } from '../../jobs/requests.js';
import type { JobKind, JobProgress } from '../../jobs/job.js';
import { sourcePolicy } from '../../palace/sources/sources.js';
import { assertOwnIdentity, hasScope } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { sseOverCapacity } from '../limits.js';
import { LIST_QUERY } from '../requests.js';
import { SseStream, sleep } from '../sse.js';
import { validQuery } from '../validate.js';

/** A job without its (possibly large) result, for lists and stream frames. */
function summary(p: JobProgress): Omit<JobProgress, 'result'> {
  const { result: _result, ...rest } = p;
  return rest;
}

export function registerJobRoutes(router: Router, deps: ApiDeps): void {
  /**
   * Start a job from its request (jobs/requests.ts): a missing body is `{}`; a mine names
   * the token's identity as its agent unless the token is admin.
   */
  const start = (kind: JobKind) => async (req: Request, res: Response) => {
    const caller = deps.caller(req);
    assertOwnIdentity(caller, req.body);
    const rt = deps.runtimeFor(req);
    const policy = sourcePolicy(rt.config, { tokenRoots: caller.roots });
    const spec = await parseJobRequest(kind, req.body === undefined ? {} : req.body, { policy, agent: hasScope(caller, 'admin') ? undefined : caller.identity,
      credentials: rt.stores.credentials });
    const started = await rt.jobs.start(spec);
    res.status(202).location(`/v1/jobs/${started.job_id}`).json({ job_id: started.job_id, progress: summary(started),
      events_url: `/v1/jobs/${started.job_id}/events` });
  };

  router.post('/v1/jobs/mine', deps.authorize, start('mine'));
  router.post('/v1/jobs/sync', deps.authorize, start('sync'));
  router.post('/v1/jobs/delete_by_source', deps.authorize, start('delete_by_source'));

  router.get('/v1/jobs', deps.authorize, async (req, res) => {
    const { limit } = validQuery<{ limit?: number }>(LIST_QUERY, req.query);
    res.json({ jobs: (await deps.runtimeFor(req).jobs.list(limit ?? 20)).map(summary) });
  });

  router.get('/v1/jobs/:id', deps.authorize, async (req, res) => {
    res.json(await deps.runtimeFor(req).jobs.progress(req.params.id as string));
  });

  router.post('/v1/jobs/:id/cancel', deps.authorize, async (req, res) => {
    const jobs = deps.runtimeFor(req).jobs;
    const id = req.params.id as string;
    await jobs.progress(id);
    res.json(summary(await jobs.cancel(id)));
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
          stream.send('end', summary(current));
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
