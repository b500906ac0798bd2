/**
 * `POST /v1/hooks/git`: GitHub and GitLab push webhooks. No bearer token (the providers cannot
 * send one): the delivery is authenticated by MEMPALACE_WEBHOOK_SECRET, checked over the raw
 * body before anything is parsed; a wrong or missing signature is a 401 and nothing is
 * scheduled. A push is matched to the registered git sources of that repository and ref, and a
 * refresh of each is requested from the profile's scheduler (debounced per source, never
 * longer than MEMPALACE_REFRESH_MAX_WAIT_MS after the first push). A replayed delivery (same id
 * or same body within the replay window, api/webhooks.ts) is a 409 and schedules nothing. Bodies
 * up to WEBHOOK_BODY_LIMIT_BYTES are read; only the push's repository URLs, ref and commit are kept.
 */
import express from 'express';
import type { Router } from 'express';
import { PalaceError, invalidArgument } from '../../core/errors.js';
import { sourcesForPush } from '../../palace/sources/registered-sources.js';
import type { ApiDeps } from '../deps.js';
import { sendPalaceError } from '../errors.js';
import { WEBHOOK_BODY_LIMIT_BYTES } from '../limits.js';
import { REPLAY_WINDOW_MS, assertFreshPush, deliveryHeader, deliveryKeys, isPushEvent, parsePush, providerOf, signatureValid } from '../webhooks.js';

export function registerHookRoutes(router: Router, deps: ApiDeps): void {
  router.post('/v1/hooks/git', deps.authorize, express.raw({ type: () => true, limit: WEBHOOK_BODY_LIMIT_BYTES }), async (req, res) => {
    const rt = deps.runtime();
    const { provider, event } = providerOf(req.headers);
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const secret = rt.config.hooks.webhookSecret;
    if (!secret || !signatureValid(provider, req.headers, raw, secret)) {
      sendPalaceError(res,
        new PalaceError('unauthenticated',
          secret ? `the ${provider} webhook signature does not match MEMPALACE_WEBHOOK_SECRET` : 'webhooks are disabled: MEMPALACE_WEBHOOK_SECRET is not set', {
          field: provider === 'github' ? 'X-Hub-Signature-256' : 'X-Gitlab-Token',
          rule: 'webhook_signature',
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
    const keys = deliveryKeys(provider, req.headers, raw);
    assertFreshPush(provider, payload, Date.now());
    const push = parsePush(provider, payload);
    if (!push) {
      res.status(202).json({ provider, event, ignored: 'the push deletes its ref', sources: [] });
      return;
    }
    if (!(await rt.refresh.claimDelivery(keys, REPLAY_WINDOW_MS))) {
      sendPalaceError(res,
        new PalaceError('conflict', `this ${provider} delivery was already received (same delivery id or same body within ${REPLAY_WINDOW_MS / 3_600_000} h)`, {
          field: deliveryHeader(provider),
          rule: 'webhook_replay',
        }));
      return;
    }
    try {
      const matched = sourcesForPush(await rt.stores.sources.list(), push);
      const requests = [];
      for (const source of matched) requests.push({ source_id: source.source_id, ...(await rt.refresh.request(source)) });
      res.status(202).json({ provider, event, ref: push.ref, after: push.after ?? null, sources: requests });
    } catch (e) {
      await rt.refresh.releaseDelivery(keys);
      throw e;
    }
  });
}
