/**
 * An operation of the palace, declared once: its name, the schema of its input and of its
 * output (TypeBox: plain JSON Schema that also gives the TypeScript type), and `run`, which
 * receives the input already checked against that schema. MCP tools, REST routes and CLI
 * commands bind to these declarations (mcp/, api/, cli/) and never restate a field or a rule.
 */
import type { Static, TObject, TSchema } from 'typebox';
import type { JsonSchema } from '../core/schema.js';
import { jsonSchemaOf } from '../core/schema.js';
import type { InputCheck } from '../core/validate-input.js';
import { parseInput } from '../core/validate-input.js';
import type { OperationCall } from './operation-call.js';
import type { Runtime } from './runtime.js';

export interface Operation<In extends TObject = TObject, Out extends TSchema = TSchema, Ctx = unknown, Options = undefined> {
  /** The operation's name; the MCP tool is `mempalace_<name>`. */
  name: string;
  input: In;
  output: Out;
  /**
   * Properties whose published bounds are clamped, never refused (docs/tools.md §9: "clamped"):
   * the input is checked without those bounds and `run` clamps with `clampToSchema`.
   */
  clamped?: readonly (keyof Static<In> & string)[];
  /** Spec-exact messages for enum violations, by property. */
  enumMessages?: Readonly<Record<string, (value: unknown) => string>>;
  /** Rules checked in `run` because JSON Schema cannot say them (e.g. one field before another). */
  rules?: readonly string[];
  /** What `run` works on, taken from the runtime every face holds and, where it needs them, from the call (palace/operation-call.ts). */
  context(rt: Runtime, call: OperationCall): Ctx;
  /**
   * `options` are what a binding declares as its difference from the other faces (for search:
   * whether the query is sanitised); every binding states them.
   */
  run(input: Static<In>, ctx: Ctx, options: Options): Promise<Static<Out>>;
}

/** Declares an operation (identity, for the inferred types). */
export function defineOperation<In extends TObject, Out extends TSchema, Ctx, Options = undefined>(
  op: Operation<In, Out, Ctx, Options>,
): Operation<In, Out, Ctx, Options> {
  return op;
}

const BOUNDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'maxLength'] as const;
const validation = new WeakMap<TObject, JsonSchema>();

/** The schema the input is checked against: the published one without the bounds of clamped properties. */
export function validationSchema(op: Pick<Operation, 'input' | 'clamped'>): JsonSchema {
  let schema = validation.get(op.input);
  if (!schema) {
    const properties: Record<string, JsonSchema> = Object.fromEntries(Object.entries(op.input.properties).map(([k, v]) => [k, jsonSchemaOf(v)]));
    for (const key of op.clamped ?? []) {
      const loose: JsonSchema = { ...properties[key] };
      for (const bound of BOUNDS) delete loose[bound];
      properties[key] = loose;
    }
    schema = { ...jsonSchemaOf(op.input), properties };
    validation.set(op.input, schema);
  }
  return schema;
}

type InputRules<In extends TObject> = Pick<Operation<In>, 'input' | 'clamped' | 'enumMessages'>;

/** The operation's input from an unchecked value, or the invalid_argument error of its first violation. */
export function parseOperationInput<In extends TObject>(op: InputRules<In>, value: unknown, check: Omit<InputCheck, 'enumMessages'> = {}): Static<In> {
  return parseInput<Static<In>>(validationSchema(op), value, { ...check, enumMessages: op.enumMessages });
}

/** Runs an operation on an unchecked value: checked first, so nothing runs on bad input. */
export async function invoke<In extends TObject, Out extends TSchema, Ctx, Options>(
  op: Operation<In, Out, Ctx, Options>,
  value: unknown,
  ctx: Ctx,
  options: Options,
): Promise<Static<Out>> {
  return op.run(parseOperationInput(op, value), ctx, options);
}

/** `value` (or the schema's default when absent) brought into the schema's published bounds. */
export function clampToSchema(schema: TSchema, value: number | undefined): number {
  const s = schema as { default?: number; minimum?: number; maximum?: number };
  const v = value ?? s.default;
  if (v === undefined) throw new Error('clampToSchema: no value and no default');
  return Math.min(s.maximum ?? Infinity, Math.max(s.minimum ?? -Infinity, v));
}
