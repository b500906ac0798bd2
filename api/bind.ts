/**
 * A REST route as a binding of a palace operation (palace/operation.ts): the route checks its
 * input (query parameters or JSON body) against the operation's input schema and answers with
 * what `run` returns. The OpenAPI document (api/openapi.ts) is generated from the same rows.
 */
import type { Router } from 'express';
import type { TObject, TSchema } from 'typebox';
import type { Operation } from '../palace/operation.js';
import { operationSpan } from '../core/tracing.js';
import type { ApiDeps } from './deps.js';
import { operationBody, operationQuery } from './validate.js';

export interface RouteBinding<Options = unknown> {
  method: 'get' | 'post';
  path: string;
  summary: string;
  /** Where the input comes from: query parameters (GET) or a JSON body (POST). */
  from: 'query' | 'body';
  operation: Operation<TObject, TSchema, never, Options>;
  /** The operation's binding options on this face. */
  options: Options;
}

/** One route row, with the operation's types kept together. */
export function routeOf<In extends TObject, Out extends TSchema, Ctx, Options>(
  row: Omit<RouteBinding<Options>, 'operation'> & { operation: Operation<In, Out, Ctx, Options> },
): RouteBinding<Options> {
  return row as unknown as RouteBinding<Options>;
}

export function registerRoutes(router: Router, deps: ApiDeps, rows: readonly RouteBinding[]): void {
  for (const row of rows) {
    const op = row.operation as Operation<TObject, TSchema, unknown, unknown>;
    router[row.method](row.path, deps.authorize, async (req, res) => {
      const input = row.from === 'query' ? operationQuery(op, req.query) : operationBody(op, req.body);
      res.json(await operationSpan(op.name, input, () => op.run(input, op.context(deps.runtimeFor(req)), row.options)));
    });
  }
}
