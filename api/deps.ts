/**
 * What the route modules receive from the app: the current runtime (a getter, because
 * `mempalace_reconnect` may swap it), the caller of a request, scope checks, the SSE gate and
 * the metrics. Routes are thin: they validate, call palace/, and shape the answer.
 */
import type { Request, RequestHandler } from 'express';
import type { Runtime } from '../palace/runtime.js';
import type { LogstreamContext } from '../palace/logstream/logstream.js';
import type { Scope } from './auth.js';
import type { SseGate } from './limits.js';
import type { ApiMetrics } from './metrics.js';
import type { Caller } from '../core/caller.js';
import type { Call } from '../palace/call.js';

export interface ApiDeps {
  runtime(): Runtime;
  /** The runtime a request sees (`Runtime.forCall`): every route that reads or writes the palace for a caller uses it. */
  runtimeFor(req: Request): Runtime;
  /** Who makes a request and through which route (palace/call.ts), as `runtimeFor` sees it. */
  callOf(req: Request): Call;
  /** The authenticated caller (routes run after `authorize`, so it is present). */
  caller(req: Request): Caller;
  /**
   * Every route's first handler: the scope its row in core/scopes.ts ROUTE_SCOPES names (a route
   * without a row is refused), and in read-only mode every route that needs more than `read`
   * is refused with 403 `read_only`.
   */
  authorize: RequestHandler;
  /** Whether the request carries a valid token with this scope (for routes open to all). */
  callerHas(req: Request, scope: Scope): boolean;
  sse: SseGate;
  metrics: ApiMetrics;
  /** Logstream operations' context (no response cap: streams send whole events). */
  logstreamContext(): LogstreamContext;
  /** How often SSE routes poll stores that cannot block (job progress, dashboard). */
  pollMs: number;
}
