/**
 * The one builder of input JSON Schemas: MCP tool inputs (mcp/registry.ts), the request models
 * of palace/ (job requests, search) and, from those, the OpenAPI document's request bodies.
 * Input objects are strict (`additionalProperties: false`).
 */
import { Type } from 'typebox';
import type { TSchema } from 'typebox';

export type JsonSchema = { [key: string]: unknown };

export const str = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: 'string', description, ...extra });
/** A string holding at least one non-space character (rule `non_empty_string`, core/validate-input.ts). */
export const text = (description: string, extra: JsonSchema = {}): JsonSchema => str(description, { pattern: NON_BLANK, ...extra });
export const int = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: 'integer', description, ...extra });

/**
 * Named formats whose rules core/validate-input.ts checks (and names in its refusals): a wing,
 * room or other palace name (blank means "none"), a date bound of a search window, a source-path
 * filter. Published in the schemas so every face shows the same rule.
 */
export const INPUT_FORMATS = { name: 'palace-name', dateBound: 'date-bound', sourceFileFilter: 'source-file-filter' } as const;
export type InputFormat = (typeof INPUT_FORMATS)[keyof typeof INPUT_FORMATS];

/** The pattern of a non-blank string. */
export const NON_BLANK = '\\S';

/** An input object with only the declared keys. */
export function input(properties: Record<string, JsonSchema> = {}, required: string[] = []): JsonSchema {
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
}

/** The same input object restricted to some of its properties (a transport that offers fewer). */
export function pick(schema: JsonSchema, keys: readonly string[]): JsonSchema {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = ((schema.required ?? []) as string[]).filter((k) => keys.includes(k));
  return input(Object.fromEntries(keys.map((k) => [k, properties[k]!])), required);
}

/** Drawer counts by name (`{ [wing or room]: count }`), with its TypeScript type. */
export const countsSchema = (description?: string) =>
  Type.Unsafe<Record<string, number>>({ type: 'object', additionalProperties: { type: 'integer' }, ...(description ? { description } : {}) });

/** A value or null, as `anyOf` branches (a type array is not portable to single-type dialects). */
export const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A TypeBox schema as the plain JSON Schema it is (TypeBox's types carry no index signature). */
export function jsonSchemaOf(schema: TSchema): JsonSchema {
  return schema as unknown as JsonSchema;
}
