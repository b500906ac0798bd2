/**
 * `/v1/jobs`: start mine / sync / delete_by_source (202 with the job id; 409 when a job already
 * runs on the source), list, get, cancel, and each job's progress as Server-Sent Events read
 * from the job store (so any replica can serve them), resumable with Last-Event-ID.
 */
import type { Request, Response, Router } from 'express';
import { invalidArgument } from '../../core/errors.js';
import type { DeleteBySourceSpec, JobProgress, JobSpec, MineSpec, SyncSpec } from '../../palace/jobs.js';
import type { SourcePolicy } from '../../palace/sources.js';
import { assertStoredSourceAllowed, resolveLocalSource, resolveMineSource, sourcePolicy } from '../../palace/sources.js';
import { assertOwnIdentity, hasScope } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { sseOverCapacity } from '../limits.js';
import { SseStream, sleep } from '../sse.js';
import { validBody, validQuery } from '../validate.js';

interface MineRequest {
  source: string; ref?: string; mode?: MineSpec['mode']; wing?: string; agent?: string; limit?: number; dry_run?: boolean;
  extract?: MineSpec['extract']; respect_gitignore?: boolean; include_ignored?: string[];
}
interface SyncRequest { project_dir?: string; wing?: string; apply?: boolean }
interface DeleteBySourceRequest { source_file: string; dry_run?: boolean }

/** A job without its (possibly large) result, for lists and stream frames. */
function summary(p: JobProgress): Omit<JobProgress, 'result'> {
  const { result: _result, ...rest } = p;
  return rest;
}

function nonEmpty(value: string | undefined): string | undefined {
  const t = value?.trim();
  return t ? t : undefined;
}

export function registerJobRoutes(router: Router, deps: ApiDeps): void {
  const policyOf = (req: Request): SourcePolicy => sourcePolicy(deps.runtime().config, { tokenRoots: deps.caller(req).roots });
  const start = async (req: Request, res: Response, spec: JobSpec) => {
    const started = await deps.runtime().jobs.start(spec);
    res.status(202).location(`/v1/jobs/${started.job_id}`).json({ job_id: started.job_id, progress: summary(started), events_url: `/v1/jobs/${started.job_id}/events` });
  };

  router.post('/v1/jobs/mine', deps.authorize, async (req, res) => {
    const caller = deps.caller(req);
    assertOwnIdentity(caller, req.body);
    const body = validBody<MineRequest>('MineRequest', req.body);
    const mode = body.mode ?? 'projects';
    const policy = policyOf(req);
    const source = await resolveMineSource({ source: body.source, ref: body.ref, allowFile: mode === 'convos' }, policy);
    const spec: MineSpec = {
      kind: 'mine', source, mode, wing: nonEmpty(body.wing), sourceBounds: policy.bounds,
      agent: nonEmpty(body.agent) ?? (hasScope(caller, 'admin') ? 'mempalace' : caller.identity),
      limit: body.limit ?? 0, dryRun: body.dry_run === true, extract: body.extract ?? 'exchange',
      respectGitignore: body.respect_gitignore !== false, includeIgnored: (body.include_ignored ?? []).map((s) => s.trim()).filter(Boolean),
    };
    await start(req, res, spec);
  });

  router.post('/v1/jobs/sync', deps.authorize, async (req, res) => {
    assertOwnIdentity(deps.caller(req), req.body);
    const body = validBody<SyncRequest>('SyncRequest', req.body);
    const policy = policyOf(req);
    const projectDir = body.project_dir === undefined ? undefined : await resolveLocalSource('project_dir', body.project_dir, policy);
    const wing = nonEmpty(body.wing);
    const apply = body.apply === true;
    if (apply && !wing && !projectDir) throw invalidArgument('apply', 'scope_required', 'apply: true needs wing or project_dir, so one call never prunes every wing of the palace');
    const spec: SyncSpec = { kind: 'sync', wing, projectDir, apply, sourceBounds: policy.bounds };
    await start(req, res, spec);
  });

  router.post('/v1/jobs/delete_by_source', deps.authorize, async (req, res) => {
    assertOwnIdentity(deps.caller(req), req.body);
    const body = validBody<DeleteBySourceRequest>('DeleteBySourceRequest', req.body);
    if (body.source_file.trim() === '') throw invalidArgument('source_file', 'non_empty_string', 'source_file must be a non-empty string');
    const policy = policyOf(req);
    await assertStoredSourceAllowed('source_file', body.source_file, policy);
    const spec: DeleteBySourceSpec = { kind: 'delete_by_source', sourceFile: body.source_file, dryRun: body.dry_run !== false, sourceBounds: policy.bounds };
    await start(req, res, spec);
  });

  router.get('/v1/jobs', deps.authorize, async (req, res) => {
    const { limit } = validQuery<{ limit?: number }>('JobListQuery', req.query);
    res.json({ jobs: (await deps.runtime().jobs.list(limit ?? 20)).map(summary) });
  });

  router.get('/v1/jobs/:id', deps.authorize, async (req, res) => {
    res.json(await deps.runtime().jobs.progress(req.params.id as string));
  });

  router.post('/v1/jobs/:id/cancel', deps.authorize, async (req, res) => {
    const jobs = deps.runtime().jobs;
    const id = req.params.id as string;
    await jobs.progress(id);
    res.json(summary(await jobs.cancel(id)));
  });

  router.get('/v1/jobs/:id/events', deps.authorize, async (req, res) => {
    const id = req.params.id as string;
    await deps.runtime().jobs.progress(id);
    const header = req.headers['last-event-id'];
    let after = 0;
    if (header !== undefined && header !== '') {
      if (typeof header !== 'string' || !/^\d{1,15}$/.test(header.trim())) throw invalidArgument('Last-Event-ID', 'non_negative_integer', 'Last-Event-ID must be a progress sequence number from this stream');
      after = Number(header.trim());
    }
    if (!deps.sse.tryAcquire()) return sseOverCapacity(res);
    const stream = new SseStream(req, res, () => deps.sse.release());
    try {
      while (!stream.closed) {
        const rt = deps.runtime();
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
