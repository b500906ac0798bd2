/**
 * Builders for the tools' JSON Schemas: input builders are the shared ones of core/schema.ts;
 * output objects describe the `structuredContent` of a result: the success shapes, or a
 * tool-level error (docs/decisions.md A7).
 */
import type { JsonSchema } from '../core/schema.js';

export type { JsonSchema } from '../core/schema.js';
export { input, pick, str } from '../core/schema.js';

// --- output shapes ------------------------------------------------------------------------------

const S: JsonSchema = { type: 'string' };
const N: JsonSchema = { type: 'number' };
const I: JsonSchema = { type: 'integer' };
const B: JsonSchema = { type: 'boolean' };
/** Nullable as `anyOf` branches: a type array is legal JSON Schema but not portable to single-type dialects. */
const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] });
const SN: JsonSchema = nullable(S);
export const types = { S, N, I, B, SN, nullable, O: { type: 'object' } as JsonSchema,
  counts: { type: 'object', additionalProperties: { type: 'integer' } } as JsonSchema };

/** An object with these properties, all of them required; other keys allowed. */
export function shape(properties: Record<string, JsonSchema>, optional: Record<string, JsonSchema> = {}): JsonSchema {
  return { type: 'object', properties: { ...properties, ...optional }, required: Object.keys(properties) };
}

export const arrayOf = (items: JsonSchema): JsonSchema => ({ type: 'array', items });

/** Every tool-level error carries `error` (and `success: false` where the tool's shape has it). */
export const TOOL_ERROR: JsonSchema = shape({ error: S }, { success: { const: false } });

/** Output schema of an object-returning tool: one of its success shapes, or a tool-level error. */
export function output(...successes: JsonSchema[]): JsonSchema {
  return { type: 'object', anyOf: [...successes, TOOL_ERROR] };
}
