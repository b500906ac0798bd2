/**
 * `POST /v1/hooks/git`: GitHub and GitLab push webhooks. No bearer token (the providers cannot
 * send one): the delivery is authenticated by MEMPALACE_WEBHOOK_SECRET, checked over the raw
 * body before anything is parsed; a wrong or missing signature is a 401 and nothing is
 * scheduled. A push is matched to the registered git sources of that repository and ref, and a
 * refresh of each is requested from the profile's scheduler (debounced per source).
 */
import express from 'express';
import type { Router } from 'express';
import { PalaceError, invalidArgument } from '../../core/errors.js';
import { sourcesForPush } from '../../palace/registered-sources.js';
import type { ApiDeps } from '../deps.js';
import { sendPalaceError } from '../errors.js';
import { REST_BODY_LIMIT_BYTES } from '../limits.js';
import { isPushEvent, parsePush, providerOf, signatureValid } from '../webhooks.js';

export function registerHookRoutes(router: Router, deps: ApiDeps): void {
  router.post('/v1/hooks/git', deps.authorize, express.raw({ type: () => true, limit: REST_BODY_LIMIT_BYTES }), async (req, res) => {
    const rt = deps.runtime();
    const { provider, event } = providerOf(req.headers);
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const secret = rt.config.hooks.webhookSecret;
    if (!secret || !signatureValid(provider, req.headers, raw, secret)) {
      sendPalaceError(res, new PalaceError('unauthenticated', secret ? `the ${provider} webhook signature does not match MEMPALACE_WEBHOOK_SECRET` : 'webhooks are disabled: MEMPALACE_WEBHOOK_SECRET is not set', {
        field: provider === 'github' ? 'X-Hub-Signature-256' : 'X-Gitlab-Token', rule: 'webhook_signature',
      }));
      return;
    }
    if (!isPushEvent(provider, event)) {
      res.status(202).json({ provider, event, ignored: 'not a push event', sources: [] });
      return;
    }
    let payload: unknown;
    try {
      payload = JSON.parse(raw.toString('utf8'));
    } catch {
      sendPalaceError(res, invalidArgument('body', 'json', 'the webhook body is not valid JSON (configure the webhook with content type application/json)'));
      return;
    }
    const push = parsePush(provider, payload);
    if (!push) {
      res.status(202).json({ provider, event, ignored: 'the push deletes its ref', sources: [] });
      return;
    }
    const matched = sourcesForPush(await rt.stores.jobs.listSources(), push);
    const requests = [];
    for (const source of matched) requests.push({ source_id: source.source_id, ...(await rt.refresh.request(source)) });
    res.status(202).json({ provider, event, ref: push.ref, after: push.after ?? null, sources: requests });
  });
}
