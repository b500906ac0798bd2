/**
 * `/v1/status`, `/v1/taxonomy` and `/v1/search` (GET with query parameters or POST with a JSON
 * body). Taxonomy and search are bindings of palace operations (api/bind.ts); the status adds
 * the running jobs to the counts.
 */
import type { Router } from 'express';
import { searchOperation } from '../../palace/search/search.js';
import type { SearchOptions } from '../../palace/search/search.js';
import { palaceCounts, taxonomyOperation } from '../../palace/system/status.js';
import { registerRoutes, routeOf } from '../bind.js';
import type { ApiDeps } from '../deps.js';

/** REST searches the query as given, with no default distance cut-off, like the CLI (docs/palace-behaviour.md §8.2, §8.6). */
export const REST_SEARCH_OPTIONS: SearchOptions = { sanitize: false, defaultMaxDistance: 0 };

export const PALACE_ROUTES = [
  routeOf({ method: 'get', path: '/v1/taxonomy', summary: 'Wing → room → drawer count.', from: 'query', operation: taxonomyOperation, options: undefined }),
  routeOf({ method: 'get', path: '/v1/search', summary: 'Hybrid search (query parameters).', from: 'query', operation: searchOperation,
    options: REST_SEARCH_OPTIONS }),
  routeOf({ method: 'post', path: '/v1/search', summary: 'Hybrid search (JSON body).', from: 'body', operation: searchOperation,
    options: REST_SEARCH_OPTIONS }),
] as const;

export function registerPalaceRoutes(router: Router, deps: ApiDeps): void {
  router.get('/v1/status', deps.authorize, async (req, res) => {
    const rt = deps.runtimeFor(req);
    const [counts, jobs] = await Promise.all([palaceCounts(rt.stores.drawers), rt.jobs.list(50)]);
    res.json({ palace: rt.stores.palace, profile: rt.config.profile, ...counts, jobs_running: jobs.filter((j) => j.state === 'running').length });
  });
  registerRoutes(router, deps, PALACE_ROUTES);
}
