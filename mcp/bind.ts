/**
 * An MCP tool as a binding of a palace operation (palace/operation.ts): the tool takes its
 * name, input and output schemas and its input rules from the declaration, and adds only what
 * is MCP's own (description, guards, annotations) and the operation's binding options.
 */
import type { TObject, TSchema } from 'typebox';
import type { JsonSchema } from '../core/schema.js';
import { jsonSchemaOf } from '../core/schema.js';
import { operationSpan } from '../core/tracing.js';
import type { Operation } from '../palace/operation.js';
import { validationSchema } from '../palace/operation.js';
import { output, pick } from './schema.js';
import type { ToolDef } from './types.js';

type McpOwn = Omit<ToolDef, 'name' | 'inputSchema' | 'outputSchema' | 'validation' | 'advisory' | 'enumMessages' | 'handler' | 'operation'>;

/**
 * What the MCP face adds to an operation; `options` is required exactly when the operation has
 * some. `fields`, when given, is the part of the input the tool offers (the other faces take all
 * of it): a difference of this face, visible here and in the published schema.
 */
export type ToolBinding<In extends TObject, Options> = McpOwn & { fields?: readonly (keyof In['properties'] & string)[] }
  & (Options extends undefined ? { options?: undefined }
    : { options: Options });

/**
 * The success shapes of an operation's output as the tool publishes them: an array result is
 * `{ items }` in structuredContent (docs/decisions.md A7), a union is its branches.
 */
function successShapes(schema: JsonSchema): JsonSchema[] {
  if (schema.type === 'array') return [{ type: 'object', properties: { items: schema }, required: ['items'] }];
  if (Array.isArray(schema.anyOf)) return schema.anyOf as JsonSchema[];
  return [schema];
}

export function toolOf<In extends TObject, Out extends TSchema, Ctx, Options>(op: Operation<In, Out, Ctx, Options>,
  binding: ToolBinding<In, Options>): ToolDef {
  const { options, fields, ...own } = binding;
  const offered = (schema: JsonSchema) => (fields ? pick(schema, fields) : schema);
  return {
    ...own,
    name: `mempalace_${op.name}`,
    inputSchema: offered(jsonSchemaOf(op.input)),
    outputSchema: output(...successShapes(jsonSchemaOf(op.output))),
    validation: offered(validationSchema(op)),
    ...(op.enumMessages ? { enumMessages: op.enumMessages } : {}),
    operation: op as unknown as Operation,
    // The registry has checked the arguments against `validation` before any handler runs.
    handler: (args, ctx) => operationSpan(op.name, args, () => op.run(args as Parameters<typeof op.run>[0], op.context(ctx.runtime, ctx), options as Options)),
  };
}
