/**
 * `GET /v1/audit` (the audit trail, filtered) and `POST /v1/revert` (undo one agent's writes),
 * both for `admin` tokens only (core/scopes.ts). A revert starts a job (jobs/revert/) and answers
 * 202 with its handle and revert id, like the job routes; the job writes its own audit records
 * with the stores themselves, its start is recorded through the request's audited view. A dry
 * run writes nothing and is answered at once with the plan.
 */
import type { Router } from 'express';
import { jobStarted } from '../../jobs/operations.js';
import { parseRevertRequest } from '../../jobs/requests.js';
import type { AuditQuery } from '../../palace/audit/list.js';
import { auditInstant, listAudit } from '../../palace/audit/list.js';
import { planRevert } from '../../palace/audit/revert.js';
import { SESSION_HEADER } from '../../palace/audit/session.js';
import type { ApiDeps } from '../deps.js';
import { AUDIT_QUERY } from '../requests.js';
import { validQuery } from '../validate.js';

type AuditQueryInput = Omit<AuditQuery, 'limit'> & { limit?: number };

export function registerAuditRoutes(router: Router, deps: ApiDeps): void {
  router.get('/v1/audit', deps.authorize, async (req, res) => {
    const q = validQuery<AuditQueryInput>(AUDIT_QUERY, req.query);
    const records = await listAudit(deps.runtime().stores.audit, { identity: q.identity, wing: q.wing, tool: q.tool, session: q.session,
      since: auditInstant('since', q.since), until: auditInstant('until', q.until), limit: q.limit ?? 100 });
    res.json({ records });
  });

  router.post('/v1/revert', deps.authorize, async (req, res) => {
    const caller = deps.caller(req);
    // Checked before anything starts: a refused request writes no job record.
    const { spec, dryRun } = parseRevertRequest(req.body, { identity: caller.identity, transport: 'rest', action: 'POST /v1/revert',
      session: req.get(SESSION_HEADER) });
    const rt = deps.runtimeFor(req);
    if (dryRun) return void res.json({ ...(await planRevert(rt.stores, spec, spec.revertId)), revert_id: spec.revertId, dry_run: true });
    const started = await rt.jobs.start(spec);
    res.status(202).location(`/v1/jobs/${started.job_id}`).json({ ...jobStarted(started), revert_id: spec.revertId });
  });
}
