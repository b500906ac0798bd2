/**
 * The one builder of input JSON Schemas: MCP tool inputs (mcp/registry.ts), the request models
 * of palace/ (job requests, search) and, from those, the OpenAPI document's request bodies.
 * Input objects are strict (`additionalProperties: false`).
 */
export type JsonSchema = { [key: string]: unknown };

export const str = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: 'string', description, ...extra });
/** A string holding at least one non-space character (rule `non_empty_string`, core/validate-input.ts). */
export const text = (description: string, extra: JsonSchema = {}): JsonSchema => str(description, { pattern: NON_BLANK, ...extra });
export const int = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: 'integer', description, ...extra });
export const num = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: 'number', description, ...extra });
export const bool = (description: string): JsonSchema => ({ type: 'boolean', description });
export const obj = (description: string): JsonSchema => ({ type: 'object', description });

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
