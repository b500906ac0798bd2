/**
 * The Express 5 app of `mempalace serve`: `/mcp` (MCP Streamable HTTP), `/v1` REST, the logstream
 * SSE tail, `/sync/peers`, `/healthz`, `/metrics` and the ops dashboard — one authentication for
 * all of them (api/auth.ts), one set of limits (api/limits.ts).
 *
 * Order of the middleware: metrics → security headers → Host/Origin pin → CORS → rate limit (per
 * static or already verified token, else per client address, so nothing is verified past the
 * limit) → authentication (OAuth tokens may need the issuer's keys) → body parsing (16 MiB on /mcp, 256 KiB elsewhere) → routes (each route checks its
 * scope) → JSON 404 → structured errors.
 */
import express from 'express';
import type { Express, Request, Response } from 'express';
import type { Runtime } from '../palace/runtime.js';
import { mcpRouter } from '../mcp/http.js';
import { TOOLS_BY_NAME } from '../mcp/registry.js';
import { PalaceMcp } from '../mcp/server.js';
import { PalaceError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { Scope } from '../core/scopes.js';
import { routeScope } from '../core/scopes.js';
import type { Caller } from '../core/caller.js';
import type { Call } from '../palace/call.js';
import { Authenticator, authenticate, hasScope, missingScope, principalOf } from './auth.js';
import type { ApiDeps } from './deps.js';
import { errorHandler, sendPalaceError, unauthorized } from './errors.js';
import type { RateLimitOptions } from './limits.js';
import { MCP_BODY_LIMIT_BYTES, REST_BODY_LIMIT_BYTES, SseGate, TokenBuckets, cors, hostPin, rateLimit, refuse, securityHeaders } from './limits.js';
import { ApiMetrics } from './metrics.js';
import { requestLog } from './request-log.js';
import { httpServerSpans } from './http-tracing.js';
import type { OAuthResourceServer } from './oauth.js';
import { oauthFromConfig } from './oauth.js';
import { dashboardStatic, registerDashboardRoutes } from './routes/dashboard.js';
import { registerHookRoutes } from './routes/hooks.js';
import { registerJobRoutes } from './routes/jobs.js';
import { registerLogstreamRoutes } from './routes/logstream.js';
import { registerOpsRoutes } from './routes/ops.js';
import { registerPalaceRoutes } from './routes/palace.js';
import { registerSourceRoutes } from './routes/sources.js';
import { registerAuditRoutes } from './routes/audit.js';
import { SESSION_HEADER } from '../palace/audit/session.js';

export interface ApiOptions {
  /** The MCP state to serve at /mcp; by default one is made over the runtime. */
  mcp?: PalaceMcp;
  /** Tokens; by default from the configuration (MEMPALACE_TOKENS_FILE, MEMPALACE_API_TOKENS, OAuth). */
  auth?: Authenticator;
  /** The OAuth resource server; by default from MEMPALACE_OAUTH_ISSUER. */
  oauth?: OAuthResourceServer;
  /** Per-token rate limit; by default MEMPALACE_API_RATE_PER_S / MEMPALACE_API_RATE_BURST. */
  rateLimit?: RateLimitOptions;
  /** Concurrent SSE streams; by default `logstream.sseMaxClients`. */
  sseMaxClients?: number;
  /** Poll interval of the job-progress and dashboard streams (default 250 ms). */
  pollMs?: number;
  /** Diagnostics and request logs; by default the runtime's logger. */
  log?: Logger;
}

export interface Api {
  app: Express;
  mcp: PalaceMcp;
  metrics: ApiMetrics;
  auth: Authenticator;
  /** The router holding every documented route (the OpenAPI test walks it). */
  routes: express.Router;
}

const STREAM_PATHS = /^\/(?:logstream\/stream|v1\/dashboard\/stream|v1\/jobs\/[^/]+\/events)$/;

function readOnlyRouteRefusal(req: Request): PalaceError {
  return new PalaceError('read_only', `the server is in read-only mode (--read-only / MEMPALACE_MCP_READ_ONLY); ${req.method} ${req.path} would write`, {
    rule: 'read_only',
  });
}

export function createApp(runtime: Runtime, opts: ApiOptions = {}): Api {
  const log = opts.log ?? runtime.log;
  const mcp = opts.mcp ?? new PalaceMcp(runtime, { log });
  const config = runtime.config;
  const oauth = opts.oauth ?? oauthFromConfig(config, log);
  const auth = opts.auth ?? Authenticator.fromConfig(config, oauth);
  const challenge = () => oauth?.challenge() ?? 'Bearer';
  /** RFC 6750 §3.1: a 403 for a missing scope names it (and, with OAuth, where to get it). */
  const refuseScope = (res: Response, caller: Caller, scope: Scope) => {
    res.setHeader('WWW-Authenticate', oauth?.insufficientScope(scope) ?? `Bearer error="insufficient_scope", scope="${scope}"`);
    return missingScope(caller, scope);
  };
  const sse = new SseGate(opts.sseMaxClients ?? config.logstream.sseMaxClients);
  const current = () => mcp.runtime;
  const metrics = new ApiMetrics({
    jobs: () => current().jobs.list(50),
    sseClients: () => sse.count,
    toolNames: new Set(TOOLS_BY_NAME.keys()),
    ...(runtime.queueDepths ? { queueDepths: () => current().queueDepths?.() ?? Promise.resolve({}) } : {}),
    deadLetters: async () => (await current().notifications.deadLetters()).length,
  });

  const callOf = (req: Request): Call => {
    const routePath = (req.route as { path?: unknown } | undefined)?.path;
    return { caller: principalOf(auth, req)?.caller, transport: 'rest', action: `${req.method} ${String(routePath ?? req.path)}`, requestId: String(req.id),
      session: req.get(SESSION_HEADER) };
  };
  const deps: ApiDeps = {
    runtime: current,
    runtimeFor: (req) => current().forCall(callOf(req)),
    callOf,
    caller: (req: Request) => principalOf(auth, req)!.caller,
    authorize: (req, res, next) => {
      const routePath = (req.route as { path?: unknown } | undefined)?.path;
      const scope = typeof routePath === 'string' ? routeScope(req.method === 'HEAD' ? 'GET' : req.method, routePath) : undefined;
      if (scope === undefined)
        return sendPalaceError(res, new PalaceError('permission_denied', `${req.method} ${req.path} has no row in the scope table`, { rule: 'scope_table' }));
      if (scope === 'open') return next();
      if (scope === 'signed') return mcp.readOnly ? sendPalaceError(res, readOnlyRouteRefusal(req)) : next();
      const principal = principalOf(auth, req);
      if (!principal) return unauthorized(res, challenge());
      const reads = req.method === 'GET' || req.method === 'HEAD';
      if (!reads && scope !== 'read' && scope !== 'replicate' && mcp.readOnly) return sendPalaceError(res, readOnlyRouteRefusal(req));
      if (!hasScope(principal.caller, scope)) return sendPalaceError(res, refuseScope(res, principal.caller, scope));
      next();
    },
    callerHas: (req, scope) => {
      const principal = principalOf(auth, req);
      return principal !== null && hasScope(principal.caller, scope);
    },
    sse,
    metrics,
    logstreamContext: () => current().logstreamContext,
    pollMs: opts.pollMs ?? 250,
  };

  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use(httpServerSpans());
  app.use(requestLog(log));
  app.use(metrics.httpMiddleware());
  app.use(securityHeaders());
  app.use(hostPin(config.api.allowedHosts, config.api.corsOrigins));
  app.use(cors(config.api.corsOrigins));
  if (oauth) {
    const metadata = oauth.metadataRoutes();
    for (const p of metadata.paths) app.get(p, metadata.handler);
  }
  const buckets = new TokenBuckets(opts.rateLimit ?? { ratePerSecond: config.api.ratePerSecond, burst: config.api.rateBurst });
  app.use(rateLimit(buckets, (req) => auth.resolve(req.headers.authorization)?.key ?? `ip:${req.ip ?? 'unknown'}`));
  app.use(authenticate(auth));
  // `/mcp` needs its row's scope before any tool runs; each tool call is then checked on its own.
  app.post('/mcp', (req, res, next) => {
    const principal = principalOf(auth, req);
    const scope = routeScope('POST', '/mcp');
    if (!principal || scope === undefined || scope === 'open' || scope === 'signed' || hasScope(principal.caller, scope)) return next();
    refuse(req, res, refuseScope(res, principal.caller, scope));
  });

  app.use('/mcp', express.json({ limit: MCP_BODY_LIMIT_BYTES, strict: false }), metrics.mcpMiddleware());
  app.use(mcpRouter(mcp, { resolveCaller: (req) => principalOf(auth, req)?.caller ?? null, challenge, allowedHosts: config.api.allowedHosts }));

  const routes = express.Router();
  // Webhooks read their raw body (the signature covers the exact bytes), so they come before JSON parsing.
  registerHookRoutes(routes, deps);
  routes.use(express.json({ limit: REST_BODY_LIMIT_BYTES }));
  // A REST request holds the runtime until it is answered, so a reconnect drains it first;
  // streams re-read the runtime on every step instead and would hold a reconnect forever.
  routes.use(async (req, res, next) => {
    if (STREAM_PATHS.test(req.path)) return next();
    const ticket = await mcp.gate.enter();
    // A client that went away while a reconnect ran has nothing left to answer.
    if (res.destroyed || res.writableEnded) return ticket.leave();
    res.once('finish', ticket.leave);
    res.once('close', ticket.leave);
    next();
  });
  registerPalaceRoutes(routes, deps);
  registerJobRoutes(routes, deps);
  registerSourceRoutes(routes, deps);
  registerAuditRoutes(routes, deps);
  registerLogstreamRoutes(routes, deps);
  registerDashboardRoutes(routes, deps);
  registerOpsRoutes(routes, deps);
  app.use(routes);
  app.use(dashboardStatic());

  app.use((req, res) => {
    sendPalaceError(res, new PalaceError('not_found', `no route for ${req.method} ${req.path}`));
  });
  app.use(errorHandler({ onStoreError: (store) => metrics.storeError(store), log }));
  return { app, mcp, metrics, auth, routes };
}
