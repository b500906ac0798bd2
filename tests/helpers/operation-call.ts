/**
 * A palace operation as a function of (context, unchecked input), the way a face calls it: a
 * `null` parameter is read as absent (docs/tools.md §0.2) and the input is checked against the
 * operation's schema first, so tests of refusals see what MCP, REST and the CLI report.
 */
import type { Static, TObject, TSchema } from 'typebox';
import type { Operation } from '../../palace/operation.js';
import { invoke } from '../../palace/operation.js';

export function operationCall<In extends TObject, Out extends TSchema, Ctx>(op: Operation<In, Out, Ctx>) {
  return (ctx: Ctx, input: Record<string, unknown> = {}): Promise<Static<Out>> =>
    invoke(op, Object.fromEntries(Object.entries(input).filter(([, v]) => v !== null)), ctx, undefined);
}
