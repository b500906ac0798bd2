/**
 * One declaration per operation: for every operation bound both as an MCP tool and as a REST
 * route, the published MCP input schema is the OpenAPI request schema (body or query
 * parameters; the part of it the tool offers) and the MCP success shape is the OpenAPI 200 response
 * (a route that starts a job documents the job's handle), built in-process from the
 * tool table and the OpenAPI document. Also: the search bounds and name rules refuse and clamp
 * the same way whichever face parses the input.
 */
import { describe, expect, it } from 'vitest';
import { OPENAPI_DOCUMENT } from '../../api/openapi.js';
import { JOB_ROUTES } from '../../api/routes/jobs.js';
import { PALACE_ROUTES } from '../../api/routes/palace.js';
import { operationBody, operationQuery } from '../../api/validate.js';
import { isPalaceError } from '../../core/errors.js';
import type { JsonSchema } from '../../core/schema.js';
import { jsonSchemaOf } from '../../core/schema.js';
import { TOOLS_BY_NAME, validationError } from '../../mcp/registry.js';
import { clampToSchema, parseOperationInput } from '../../palace/operation.js';
import { SEARCH_INPUT, searchOperation } from '../../palace/search/search.js';

type Doc = { paths: Record<string, Record<string, Record<string, unknown>>>; components: { schemas: Record<string, JsonSchema> } };
const doc = OPENAPI_DOCUMENT as unknown as Doc;

/** A component reference replaced by the component (one level: the document's components are flat). */
function resolved(schema: JsonSchema): JsonSchema {
  const ref = schema.$ref;
  return typeof ref === 'string' ? doc.components.schemas[ref.replace('#/components/schemas/', '')]! : schema;
}

/** The request schema of a documented operation: its JSON body, or the object its query parameters make. */
function requestSchema(path: string, method: string): JsonSchema {
  const op = doc.paths[path]![method]!;
  const body = op.requestBody as { content: Record<string, { schema: JsonSchema }> } | undefined;
  if (body) return resolved(body.content['application/json']!.schema);
  const params = (op.parameters ?? []) as { name: string; required: boolean; schema: JsonSchema; description?: string }[];
  const required = params.filter((p) => p.required).map((p) => p.name);
  return {
    type: 'object',
    ...(required.length > 0 ? { required } : {}),
    properties: Object.fromEntries(params.map((p) => [p.name, { ...p.schema, ...(p.description ? { description: p.description } : {}) }])),
    additionalProperties: false,
  };
}

const plain = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema));

describe('an operation bound to MCP and REST', () => {
  // A tool and a route bind the same declaration when they name the same operation over the same
  // input object (a job's tool waits for it and its route answers 202 at once: two declarations, one input).
  const tools = [...TOOLS_BY_NAME.values()];
  const bound = [...PALACE_ROUTES, ...JOB_ROUTES].flatMap((row) => {
    const tool = tools.find((t) => t.operation?.name === row.operation.name && t.operation.input === row.operation.input);
    return tool ? [{ row, tool }] : [];
  });

  it('binds search, taxonomy, mine, sync and delete_by_source on both faces', () => {
    expect(new Set(bound.map((b) => b.tool.name))).toEqual(
      new Set(['mempalace_search', 'mempalace_get_taxonomy', 'mempalace_mine', 'mempalace_sync', 'mempalace_delete_by_source']),
    );
  });

  for (const { row, tool } of bound) {
    it(`publishes the same input schema on MCP and in OpenAPI (${tool.name}, ${row.method.toUpperCase()} ${row.path})`, () => {
      const mcp = plain(tool.inputSchema) as JsonSchema;
      const rest = plain(requestSchema(row.path, row.method)) as JsonSchema;
      // A tool may offer part of the input (the mine tool: no git ref, no gitignore overrides); what it offers is the same.
      const offered = Object.keys(mcp.properties as object);
      expect(pickProperties(rest, offered)).toEqual(mcp.properties);
      expect((rest.required ?? []) as string[]).toEqual(expect.arrayContaining((mcp.required ?? []) as string[]));
      expect(((rest.required ?? []) as string[]).filter((k) => offered.includes(k))).toEqual(mcp.required ?? []);
      expect(rest.additionalProperties).toBe(false);
      expect(mcp.additionalProperties).toBe(false);
    });

    it(`documents the operation's output on REST (${tool.name}, ${row.method.toUpperCase()} ${row.path})`, () => {
      const responses = doc.paths[row.path]![row.method]!.responses as Record<string, { content: Record<string, { schema: JsonSchema }> }>;
      const status = row.accepted ? '202' : '200';
      const rest = resolved(responses[status]!.content['application/json']!.schema);
      if (row.accepted) {
        // The route starts the job and answers with its handle; the tool waits for the same job.
        expect(Object.keys(rest.properties as object)).toEqual(Object.keys(jsonSchemaOf(row.operation.output).properties as object));
        return;
      }
      const mcpSuccess = (tool.outputSchema.anyOf as JsonSchema[])[0];
      expect(plain(rest)).toEqual(plain(mcpSuccess));
    });
  }
});

function pickProperties(schema: JsonSchema, keys: readonly string[]): unknown {
  const properties = schema.properties as Record<string, unknown>;
  return Object.fromEntries(keys.map((k) => [k, properties[k]]));
}

describe('search input on every face', () => {
  const tool = TOOLS_BY_NAME.get('mempalace_search')!;
  /** The error MCP reports for these arguments (after its coercion), or undefined when accepted. */
  const mcpRefusal = (args: Record<string, unknown>) => (tool.validate(args) ? undefined : validationError(tool, tool.validate.errors![0]!));
  const refusal = (f: () => unknown) => {
    try {
      f();
      return undefined;
    } catch (e) {
      if (isPalaceError(e)) return e;
      throw e;
    }
  };
  const faces = {
    mcp: (args: Record<string, unknown>) => mcpRefusal(args),
    restBody: (args: Record<string, unknown>) => refusal(() => operationBody(searchOperation, args)),
    restQuery: (args: Record<string, unknown>) =>
      refusal(() => operationQuery(searchOperation, Object.fromEntries(Object.entries(args).map(([k, v]) => [k, String(v)])))),
    code: (args: Record<string, unknown>) => refusal(() => parseOperationInput(searchOperation, args)),
  };

  const refused: [Record<string, unknown>, string, string][] = [
    [{ query: '  ' }, 'query', 'non_empty_string'],
    [{ query: 'x', wing: 'a/b' }, 'wing', 'path_characters'],
    [{ query: 'x', room: 'a..b' }, 'room', 'path_characters'],
    [{ query: 'x', wing: '-bad-' }, 'wing', 'name_pattern'],
    [{ query: 'x', since: '2026-02-30' }, 'since', 'iso_date_or_datetime'],
    [{ query: 'x', max_distance: -1 }, 'max_distance', 'minimum'],
    [{ query: 'x', candidate_strategy: 'magic' }, 'candidate_strategy', 'enum'],
    [{ query: 'x', colour: 'blue' }, 'colour', 'unknown_property'],
  ];
  for (const [args, field, rule] of refused) {
    it(`refuses ${JSON.stringify(args)} naming ${field} and ${rule} on MCP, REST (body and query) and in code`, () => {
      for (const [face, check] of Object.entries(faces)) {
        const e = check(args);
        expect(e, face).toBeDefined();
        expect({ face, field: e!.field, rule: e!.rule }).toEqual({ face, field, rule });
      }
    });
  }

  it('accepts an out-of-range limit and a long query everywhere, and clamps the limit to the declared bounds', () => {
    for (const [face, check] of Object.entries(faces)) {
      expect(check({ query: 'q'.repeat(400), limit: 0 }), face).toBeUndefined();
      expect(check({ query: 'x', limit: 1_000_000 }), face).toBeUndefined();
    }
    expect(clampToSchema(SEARCH_INPUT.properties.limit, 0)).toBe(1);
    expect(clampToSchema(SEARCH_INPUT.properties.limit, 1_000_000)).toBe(100);
    expect(clampToSchema(SEARCH_INPUT.properties.limit, undefined)).toBe(5);
    expect(tool.inputSchema.properties).toMatchObject({ limit: { minimum: 1, maximum: 100 }, query: { maxLength: 250 } });
  });
});
