/**
 * The one table of scopes: what an HTTP caller's token must hold for every MCP tool and every
 * HTTP route (docs/decisions.md "Identity in the team deployment"). Scopes imply the ones below them:
 * `admin` ⊇ `write` ⊇ `read` ⊇ `replicate`; `open` routes need no token at all. `replicate`
 * alone lets a mesh peer pull the log (`/sync/version_vector`, `/sync/ops`, `/sync/artifact`)
 * and nothing else: no tool, no drawer, not `/mcp` (issue 24).
 *
 * Stdio MCP and the CLI run as the local user and are not scoped. A tool or route missing from
 * this table is refused (and the scope-table test fails), so nothing is reachable by default.
 */
export const SCOPES = ['replicate', 'read', 'write', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];
/** `open`: no token; `signed`: no token, the request carries its own signature (webhooks), and it writes. */
export type RouteScope = Scope | 'open' | 'signed';

export const IMPLIED_SCOPES: Record<Scope, readonly Scope[]> = {
  replicate: ['replicate'],
  read: ['read', 'replicate'],
  write: ['write', 'read', 'replicate'],
  admin: ['admin', 'write', 'read', 'replicate'],
};

const REPLICATE: Scope = 'replicate';
const READ: Scope = 'read';
const WRITE: Scope = 'write';
const ADMIN: Scope = 'admin';

/** Every MCP tool, by name. Writes need `write`; reopening the stores under everyone needs `admin`. */
export const TOOL_SCOPES: Readonly<Record<string, Scope>> = {
  mempalace_status: READ,
  mempalace_list_wings: READ,
  mempalace_list_rooms: READ,
  mempalace_get_taxonomy: READ,
  mempalace_get_aaak_spec: READ,
  mempalace_kg_query: READ,
  mempalace_kg_add: WRITE,
  mempalace_kg_invalidate: WRITE,
  mempalace_kg_supersede: WRITE,
  mempalace_kg_timeline: READ,
  mempalace_kg_stats: READ,
  mempalace_traverse: READ,
  mempalace_find_tunnels: READ,
  mempalace_graph_stats: READ,
  mempalace_mesh_peers: READ,
  mempalace_create_tunnel: WRITE,
  mempalace_list_tunnels: READ,
  mempalace_delete_tunnel: WRITE,
  mempalace_list_hallways: READ,
  mempalace_delete_hallway: WRITE,
  mempalace_follow_tunnels: READ,
  mempalace_search: READ,
  mempalace_check_duplicate: READ,
  mempalace_add_drawer: WRITE,
  mempalace_checkpoint: WRITE,
  mempalace_delete_drawer: WRITE,
  mempalace_mine: WRITE,
  mempalace_delete_by_source: WRITE,
  mempalace_sync: WRITE,
  mempalace_get_drawer: READ,
  mempalace_list_drawers: READ,
  mempalace_update_drawer: WRITE,
  mempalace_diary_write: WRITE,
  mempalace_diary_read: READ,
  mempalace_hook_settings: WRITE,
  mempalace_memories_filed_away: WRITE,
  mempalace_reconnect: ADMIN,
  mempalace_event_append: WRITE,
  mempalace_task_create: WRITE,
  mempalace_event_list: READ,
  mempalace_event_wait: READ,
  mempalace_event_ack: WRITE,
  mempalace_artifact_put: WRITE,
  mempalace_artifact_get: READ,
  mempalace_patch_submit: WRITE,
};

/**
 * Every HTTP route, as `METHOD path` with Express path parameters. `/mcp` itself needs a valid
 * token of any scope; each tool call is then checked against TOOL_SCOPES.
 */
export const ROUTE_SCOPES: Readonly<Record<string, RouteScope>> = {
  'POST /mcp': READ,
  'GET /v1/status': READ,
  'GET /v1/taxonomy': READ,
  'GET /v1/search': READ,
  'POST /v1/search': READ,
  'POST /v1/jobs/mine': WRITE,
  'POST /v1/jobs/sync': WRITE,
  'POST /v1/jobs/delete_by_source': WRITE,
  'GET /v1/jobs': READ,
  'GET /v1/jobs/:id': READ,
  'POST /v1/jobs/:id/cancel': WRITE,
  'GET /v1/jobs/:id/events': READ,
  'GET /logstream/stream': READ,
  'GET /sync/peers': READ,
  'GET /sync/version_vector': REPLICATE,
  'GET /sync/ops': REPLICATE,
  'GET /sync/artifact': REPLICATE,
  'GET /v1/dashboard/stream': READ,
  'GET /v1/sources': READ,
  'POST /v1/sources': WRITE,
  'GET /v1/sources/:id': READ,
  'DELETE /v1/sources/:id': WRITE,
  'POST /v1/sources/:id/refresh': WRITE,
  'GET /v1/notifications': READ,
  'POST /v1/dead-letters/:queue/:id/retry': WRITE,
  // Authenticated by the push's signature (MEMPALACE_WEBHOOK_SECRET), not by a bearer token.
  'POST /v1/hooks/git': 'signed',
  // The audit trail shows every agent's writes; revert rewrites them (issue 28).
  'GET /v1/audit': ADMIN,
  'POST /v1/revert': ADMIN,
  'GET /metrics': READ,
  'GET /healthz': 'open',
  'GET /v1/openapi.json': 'open',
};

export function toolScope(name: string): Scope | undefined {
  return Object.hasOwn(TOOL_SCOPES, name) ? TOOL_SCOPES[name] : undefined;
}

export function routeScope(method: string, routePath: string): RouteScope | undefined {
  const key = `${method.toUpperCase()} ${routePath}`;
  return Object.hasOwn(ROUTE_SCOPES, key) ? ROUTE_SCOPES[key] : undefined;
}

/** Whether a scope list (already expanded by implication) grants `scope`. */
export function grants(scopes: readonly string[], scope: Scope): boolean {
  return scopes.includes(scope);
}
