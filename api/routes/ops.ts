/**
 * Operations routes: `/healthz` (open, for probes: per-engine status, 503 when any is down;
 * error details only for a caller with a read token), `/metrics` (Prometheus, read scope) and
 * `/v1/openapi.json` (open).
 */
import type { Router } from 'express';
import { healthReport } from '../health.js';
import type { ApiDeps } from '../deps.js';
import { OPENAPI_DOCUMENT } from '../openapi.js';

export function registerOpsRoutes(router: Router, deps: ApiDeps): void {
  router.get('/healthz', deps.authorize, async (req, res) => {
    const report = await healthReport(deps.runtime());
    for (const e of Object.values(report.engines)) if (e.status === 'down') deps.metrics.storeError(e.engine);
    if (!deps.callerHas(req, 'read')) { for (const e of Object.values(report.engines)) delete e.error; }
    res.status(report.status === 'ok' ? 200 : 503).json(report);
  });

  router.get('/metrics', deps.authorize, async (_req, res) => {
    const text = await deps.metrics.registry.metrics();
    res.type(deps.metrics.registry.contentType).send(text);
  });

  router.get('/v1/openapi.json', deps.authorize, (_req, res) => {
    res.json(OPENAPI_DOCUMENT);
  });
}
