/**
 * `GET /v1/audit` (the audit trail, filtered) and `POST /v1/revert` (undo one agent's writes),
 * both for `admin` tokens only (core/scopes.ts). A revert runs with the stores themselves, not
 * the audited view, because it writes its own audit records (palace/audit/revert.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Router } from 'express';
import type { AuditQuery } from '../../palace/audit/list.js';
import { auditInstant, listAudit } from '../../palace/audit/list.js';
import { runRevert } from '../../palace/audit/revert.js';
import { SESSION_HEADER } from '../../palace/audit/session.js';
import type { ApiDeps } from '../deps.js';
import { AUDIT_QUERY, REVERT_REQUEST } from '../requests.js';
import { validBody, validQuery } from '../validate.js';

type AuditQueryInput = Omit<AuditQuery, 'limit'> & { limit?: number };

interface RevertInput {
  agent: string;
  session?: string;
  since?: string;
  wing?: string;
  dry_run?: boolean;
  revert_id?: string;
}

export function registerAuditRoutes(router: Router, deps: ApiDeps): void {
  router.get('/v1/audit', deps.authorize, async (req, res) => {
    const q = validQuery<AuditQueryInput>(AUDIT_QUERY, req.query);
    const records = await listAudit(deps.runtime().stores.audit, { identity: q.identity, wing: q.wing, tool: q.tool, session: q.session,
      since: auditInstant('since', q.since), until: auditInstant('until', q.until), limit: q.limit ?? 100 });
    res.json({ records });
  });

  router.post('/v1/revert', deps.authorize, async (req, res) => {
    const body = validBody<RevertInput>(REVERT_REQUEST, req.body);
    const rt = deps.runtime();
    const caller = deps.caller(req);
    const outcome = await runRevert({ ...rt.stores, embedder: rt.embedder }, { agent: body.agent, session: body.session,
      since: auditInstant('since', body.since), wing: body.wing }, { revertId: body.revert_id ?? `revert_${randomUUID()}`, dryRun: body.dry_run ?? false,
      caller: { identity: caller.identity, transport: 'rest', action: 'POST /v1/revert', request_id: String(req.id), session: req.get(SESSION_HEADER) } });
    res.json(outcome);
  });
}
