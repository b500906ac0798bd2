/**
 * Request validation against the OpenAPI document's component schemas: the first violation
 * becomes an `invalid_argument` error naming the field and the JSON Schema rule it broke.
 * Query strings are validated with type coercion (`limit=5` is an integer).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { invalidArgument } from '../core/errors.js';
import { COMPONENT_SCHEMAS } from './openapi.js';
import type { SchemaName } from './openapi.js';

const DOC_ID = 'mempalace-api';

function makeAjv(coerceTypes: boolean): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: false, coerceTypes, useDefaults: false });
  ajv.addSchema({ $id: DOC_ID, components: { schemas: COMPONENT_SCHEMAS } });
  return ajv;
}

const bodyAjv = makeAjv(false);
const queryAjv = makeAjv(true);
const cache = new Map<string, ValidateFunction>();

function validator(ajv: Ajv2020, kind: string, name: SchemaName): ValidateFunction {
  const key = `${kind}:${name}`;
  let fn = cache.get(key);
  if (!fn) {
    fn = ajv.compile({ $ref: `${DOC_ID}#/components/schemas/${name}` });
    cache.set(key, fn);
  }
  return fn;
}

function describe(e: ErrorObject, where: string): Error {
  const params = e.params as Record<string, unknown>;
  const path = e.instancePath.split('/').filter(Boolean).join('.');
  if (e.keyword === 'required') {
    const field = [path, String(params.missingProperty)].filter(Boolean).join('.');
    return invalidArgument(field, 'required', `${field} is required`);
  }
  if (e.keyword === 'additionalProperties') {
    const field = [path, String(params.additionalProperty)].filter(Boolean).join('.');
    return invalidArgument(field, 'unknown_property', `unknown ${where} property '${field}'`);
  }
  const field = path || where;
  if (e.keyword === 'enum') return invalidArgument(field, 'enum', `${field} must be one of: ${(params.allowedValues as unknown[]).join(', ')}`);
  return invalidArgument(field, e.keyword, `${field} ${e.message ?? 'is invalid'}`);
}

/** The body as the named schema, or an invalid_argument error. A missing body counts as `{}`. */
export function validBody<T>(name: SchemaName, body: unknown): T {
  const value = body === undefined ? {} : body;
  const fn = validator(bodyAjv, 'body', name);
  if (!fn(value)) throw describe(fn.errors![0]!, 'body');
  return value as T;
}

/**
 * Query parameters as the named schema (strings coerced to the declared types). A parameter
 * given twice arrives as an array and is refused by name.
 */
export function validQuery<T>(name: SchemaName, query: Record<string, unknown>): T {
  const value: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(query)) {
    if (Array.isArray(v)) throw invalidArgument(k, 'single_value', `query parameter ${k} must be given once`);
    value[k] = v;
  }
  const fn = validator(queryAjv, 'query', name);
  if (!fn(value)) throw describe(fn.errors![0]!, 'query');
  return value as T;
}
