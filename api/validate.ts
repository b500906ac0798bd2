/**
 * Request validation of the REST routes against the request models the OpenAPI document is
 * generated from (api/openapi.ts), by the one input validator (core/validate-input.ts): the
 * first violation becomes an `invalid_argument` error naming the field and the rule, with the
 * message MCP gives for the same field. Query strings are validated with type coercion
 * (`limit=5` is an integer).
 */
import type { Static, TObject } from 'typebox';
import { invalidArgument } from '../core/errors.js';
import type { JsonSchema } from '../core/schema.js';
import type { InputCheck } from '../core/validate-input.js';
import { parseInput } from '../core/validate-input.js';
import type { Operation } from '../palace/operation.js';
import { validationSchema } from '../palace/operation.js';

/** The body as the model, or an invalid_argument error. A missing body counts as `{}`. */
export function validBody<T>(model: JsonSchema, body: unknown, rules: Pick<InputCheck, 'enumMessages'> = {}): T {
  return parseInput<T>(model, body === undefined ? {} : body, { ...rules, where: 'body' });
}

/**
 * Query parameters as the model (strings coerced to the declared types). A parameter given
 * twice arrives as an array and is refused by name.
 */
export function validQuery<T>(model: JsonSchema, query: Record<string, unknown>, rules: Pick<InputCheck, 'enumMessages'> = {}): T {
  const value: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(query)) {
    if (Array.isArray(v)) throw invalidArgument(k, 'single_value', `query parameter ${k} must be given once`);
    // Coercion turns `1e309` into Infinity, which the bounds checks let through; a number
    // parameter must be a finite number.
    const declared = (model.properties as Record<string, { type?: unknown }> | undefined)?.[k]?.type;
    if ((declared === 'integer' || declared === 'number') && typeof v === 'string' && v.trim() !== '' && !Number.isFinite(Number(v)) &&
      !Number.isNaN(Number(v))) {
      throw invalidArgument(k, 'type', `${k} must be a finite ${declared}`);
    }
    value[k] = v;
  }
  return parseInput<T>(model, value, { ...rules, where: 'query', coerce: true });
}

type InputRules<In extends TObject> = Pick<Operation<In>, 'input' | 'clamped' | 'enumMessages'>;

/** A JSON body as an operation's input. */
export function operationBody<In extends TObject>(op: InputRules<In>, body: unknown): Static<In> {
  return validBody<Static<In>>(validationSchema(op), body, { enumMessages: op.enumMessages });
}

/** Query parameters as an operation's input. */
export function operationQuery<In extends TObject>(op: InputRules<In>, query: Record<string, unknown>): Static<In> {
  return validQuery<Static<In>>(validationSchema(op), query, { enumMessages: op.enumMessages });
}
