/**
 * The one validator of inputs against their JSON Schemas (core/schema.ts), for every transport:
 * MCP tool arguments, REST bodies and query strings, the CLI through the request models. The
 * first violation becomes one `invalid_argument` error naming the field and the rule, with the
 * same message whichever transport brought the input.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { PalaceError } from './errors.js';
import { invalidArgument, isPalaceError } from './errors.js';
import type { JsonSchema } from './schema.js';
import { INPUT_FORMATS, NON_BLANK } from './schema.js';
import type { InputFormat } from './schema.js';
import { validateDateBound, validateOptionalName, validateSourceFileFilter } from './validate.js';

export interface InputCheck {
  /** What the input is, named when the whole of it is at fault (`arguments`, `body`, `query`). */
  where?: string;
  /** Convert strings to the declared scalar types first (query strings). */
  coerce?: boolean;
  /** Spec-exact messages for enum violations, by field. */
  enumMessages?: Readonly<Record<string, (value: unknown) => string>> | undefined;
}

// `verbose` keeps the offending value on each error, for messages that quote it.
const OPTIONS = { strict: true, allowUnionTypes: true, allErrors: false, verbose: true, useDefaults: false } as const;
/**
 * The rule of each named format (core/schema.ts): a format is a rule too rich for plain JSON
 * Schema (trimming, several sub-rules with their own names), checked by the same function the
 * message comes from, so the schema and the refusal never disagree.
 */
const FORMAT_RULES: Record<InputFormat, (field: string, value: string) => unknown> = {
  [INPUT_FORMATS.name]: validateOptionalName,
  [INPUT_FORMATS.dateBound]: validateDateBound,
  [INPUT_FORMATS.sourceFileFilter]: (field, value) => validateSourceFileFilter(value, field),
};

/** The refusal of `value` by a format's rule, or undefined when it conforms. */
function formatViolation(format: string, field: string, value: unknown): PalaceError | undefined {
  const rule = FORMAT_RULES[format as InputFormat];
  try {
    rule(field, String(value));
    return undefined;
  } catch (e) {
    if (isPalaceError(e)) return e;
    throw e;
  }
}

function withFormats(ajv: Ajv2020): Ajv2020 {
  for (const format of Object.keys(FORMAT_RULES)) {
    ajv.addFormat(format, { type: 'string', validate: (value: string) => formatViolation(format, format, value) === undefined });
  }
  return ajv;
}

const plain = withFormats(new Ajv2020(OPTIONS));
const coercing = withFormats(new Ajv2020({ ...OPTIONS, coerceTypes: true }));
const compiled = new WeakMap<Ajv2020, WeakMap<JsonSchema, ValidateFunction>>([[plain, new WeakMap()], [coercing, new WeakMap()]]);

/** The compiled validator of a schema (compiled once per schema object). */
export function compileInput(schema: JsonSchema, coerce = false): ValidateFunction {
  const ajv = coerce ? coercing : plain;
  const cache = compiled.get(ajv)!;
  let fn = cache.get(schema);
  if (!fn) {
    fn = ajv.compile(schema);
    cache.set(schema, fn);
  }
  return fn;
}

const article = (type: string) => `a${/^[aeiou]/.test(type) ? 'n' : ''} ${type}`;

/** One schema violation as the error every transport reports. */
export function describeViolation(e: ErrorObject, opts: InputCheck = {}): PalaceError {
  const params = e.params as Record<string, unknown>;
  const path = e.instancePath.split('/').filter(Boolean).join('.');
  const where = opts.where ?? 'input';
  const below = (key: unknown) => [path, String(key)].filter(Boolean).join('.');
  const field = path || where;
  switch (e.keyword) {
    case 'required': {
      const missing = below(params.missingProperty);
      return invalidArgument(missing, 'required', `${missing} is required`);
    }
    case 'additionalProperties': {
      const unknown = below(params.additionalProperty);
      return invalidArgument(unknown, 'unknown_property', `unknown property '${unknown}'`);
    }
    case 'type': {
      const expected = params.type as string | string[];
      if (expected === 'string') return invalidArgument(field, 'type', `${field} must be a non-empty string`);
      return invalidArgument(field, 'type', `${field} must be ${Array.isArray(expected) ? expected.join(' or ') : article(expected)}`);
    }
    case 'enum': {
      const custom = opts.enumMessages?.[field];
      return invalidArgument(field, 'enum',
        custom ? custom(e.data) : `${field}=${JSON.stringify(e.data)} is not one of: ${(params.allowedValues as unknown[]).join(', ')}`);
    }
    case 'minimum':
    case 'maximum':
      return invalidArgument(field, e.keyword, `${field} must be ${e.keyword === 'minimum' ? '≥' : '≤'} ${String(params.limit)}`);
    case 'maxLength':
      return invalidArgument(field, 'maxLength', `${field} exceeds maximum length of ${String(params.limit)} characters`);
    case 'minLength':
      if (params.limit === 1) return invalidArgument(field, 'non_empty_string', `${field} must be a non-empty string`);
      return invalidArgument(field, 'minLength', `${field} must be at least ${String(params.limit)} characters long`);
    case 'pattern':
      if (params.pattern === NON_BLANK) return invalidArgument(field, 'non_empty_string', `${field} must be a non-empty string`);
      return invalidArgument(field, 'pattern', `${field} must match ${String(params.pattern)}`);
    case 'format':
      return formatViolation(String(params.format), field, e.data) ?? invalidArgument(field, 'format', `${field} must be a ${String(params.format)}`);
    default:
      return invalidArgument(field, e.keyword, `${field} ${e.message ?? 'is invalid'} (${e.keyword})`);
  }
}

/** The first violation of `value` against `schema`, or undefined when it conforms. */
export function inputViolation(schema: JsonSchema, value: unknown, opts: InputCheck = {}): PalaceError | undefined {
  const fn = compileInput(schema, opts.coerce);
  return fn(value) ? undefined : describeViolation(fn.errors![0]!, opts);
}

/** `value` as the schema's type, or the invalid_argument error of its first violation. */
export function parseInput<T>(schema: JsonSchema, value: unknown, opts: InputCheck = {}): T {
  const violation = inputViolation(schema, value, opts);
  if (violation) throw violation;
  return value as T;
}
