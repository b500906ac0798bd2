/**
 * `/v1/status`, `/v1/taxonomy` and `/v1/search` (GET with query parameters or POST with a JSON
 * body): thin over palace/status and palace/search. Search runs the query as given, like the
 * CLI (no long-query sanitiser, no default distance cut-off).
 */
import type { Router } from 'express';
import type { SearchInput } from '../../palace/search.js';
import { search } from '../../palace/search.js';
import { palaceCounts, taxonomy } from '../../palace/status.js';
import type { ApiDeps } from '../deps.js';
import { SEARCH_REQUEST } from '../requests.js';
import { validBody, validQuery } from '../validate.js';

const SEARCH_OPTIONS = { sanitize: false, defaultMaxDistance: 0 };

export function registerPalaceRoutes(router: Router, deps: ApiDeps): void {
  router.get('/v1/status', deps.authorize, async (_req, res) => {
    const rt = deps.runtime();
    const [counts, jobs] = await Promise.all([palaceCounts(rt.stores.drawers), rt.jobs.list(50)]);
    res.json({ palace: rt.stores.palace, profile: rt.config.profile, ...counts, jobs_running: jobs.filter((j) => j.state === 'running').length });
  });

  router.get('/v1/taxonomy', deps.authorize, async (_req, res) => {
    res.json({ taxonomy: await taxonomy(deps.runtime().stores.drawers) });
  });

  router.get('/v1/search', deps.authorize, async (req, res) => {
    const input = validQuery<SearchInput>(SEARCH_REQUEST, req.query);
    res.json(await search(deps.runtime().drawerContext, input, SEARCH_OPTIONS));
  });

  router.post('/v1/search', deps.authorize, async (req, res) => {
    const input = validBody<SearchInput>(SEARCH_REQUEST, req.body);
    res.json(await search(deps.runtime().drawerContext, input, SEARCH_OPTIONS));
  });
}
