/**
 * A REST route as a binding of a palace operation (palace/operation.ts): the route checks its
 * input (query parameters or JSON body) against the operation's input schema and answers with
 * what `run` returns. The OpenAPI document (api/openapi.ts) is generated from the same rows.
 */
import type { Request, Response, Router } from 'express';
import type { TObject, TSchema } from 'typebox';
import type { Operation } from '../palace/operation.js';
import type { OperationCall } from '../palace/operation-call.js';
import { mempalaceHome } from '../palace/system/system.js';
import { operationSpan } from '../core/tracing.js';
import { assertOwnIdentity } from './auth.js';
import type { ApiDeps } from './deps.js';
import { operationBody, operationQuery } from './validate.js';

export interface RouteBinding<Options = unknown> {
  method: 'get' | 'post';
  path: string;
  summary: string;
  /** The OpenAPI tag of the route (default `palace`). */
  tag?: 'palace' | 'jobs';
  /** Where the input comes from: query parameters (GET) or a JSON body (POST). */
  from: 'query' | 'body';
  operation: Operation<TObject, TSchema, never, Options>;
  /** The operation's binding options on this face. */
  options: Options;
  /**
   * The route starts something and answers 202 with its Location (a job); `conflict` documents
   * the 409 of a source another job holds.
   */
  accepted?: { location(result: never): string; conflict: string };
  /** Body fields naming an agent must be the token's identity unless it is admin (the MCP tools' agentFields). */
  ownIdentity?: true;
}

/** One route row, with the operation's types kept together. */
export function routeOf<In extends TObject, Out extends TSchema, Ctx, Options>(
  row: Omit<RouteBinding<Options>, 'operation' | 'accepted'> & {
    operation: Operation<In, Out, Ctx, Options>;
    accepted?: { location(result: Awaited<ReturnType<Operation<In, Out, Ctx, Options>['run']>>): string; conflict: string };
  },
): RouteBinding<Options> {
  return row as unknown as RouteBinding<Options>;
}

/** The call a request makes, for the operations that need more than the runtime (palace/operation-call.ts). */
function operationCall(deps: ApiDeps, req: Request, res: Response): OperationCall {
  const hungUp = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) hungUp.abort();
  });
  return { ...deps.callOf(req), signal: hungUp.signal, onJobProgress: undefined, clientRoots: async () => undefined, home: mempalaceHome(),
    reconnect: undefined };
}

export function registerRoutes(router: Router, deps: ApiDeps, rows: readonly RouteBinding[]): void {
  for (const row of rows) {
    const op = row.operation as Operation<TObject, TSchema, unknown, unknown>;
    router[row.method](row.path, deps.authorize, async (req, res) => {
      if (row.ownIdentity) assertOwnIdentity(deps.caller(req), req.body);
      const input = row.from === 'query' ? operationQuery(op, req.query) : operationBody(op, req.body);
      const result = await operationSpan(op.name, input, () => op.run(input, op.context(deps.runtimeFor(req), operationCall(deps, req, res)), row.options));
      if (row.accepted) res.status(202).location(row.accepted.location(result as never));
      res.json(result);
    });
  }
}
