/**
 * A property-based fuzzer driven by the served OpenAPI document (`/v1/openapi.json`), in the
 * manner of Schemathesis: for every operation it generates requests from the documented request
 * schemas (bodies, query parameters, path parameters) with fast-check and checks the server
 * against the document:
 *
 * - every answer's status is one the operation documents, and its JSON body validates against
 *   the schema documented for that status;
 * - a request valid by the document is never refused with 400, except by a rule the operation
 *   lists in its 400 response's `x-rules` (checks the schema cannot express, such as a source
 *   outside the allowed roots);
 * - a request made invalid in exactly one field is refused with 400 naming that field.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiHarness } from './api-harness.js';
import { startApi, tempDir } from './api-harness.js';
import { INPUT_FORMATS } from '../../core/schema.js';

type Schema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  required: boolean;
  schema: Schema;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { required: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }>; 'x-rules'?: string[] }>;
  /** Inputs whose published bounds the route clamps to rather than refuses. */
  'x-clamped'?: string[];
}

/** The values a property refuses; for a clamped input only those of the wrong type (its bounds clamp). */
function refusedValues(op: Operation, name: string, schema: Schema): unknown[] {
  if (!(op['x-clamped'] ?? []).includes(name)) return invalidValue(schema);
  const { minimum: _min, maximum: _max, maxLength: _len, ...unbounded } = resolve(schema);
  return invalidValue(unbounded);
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

/** Runs per operation for valid and for invalid requests; the whole file stays well under two minutes. */
const RUNS = 25;
const METHODS = ['get', 'post', 'put', 'delete'];

let doc: Doc;
const ajv = new Ajv2020({ strict: false, allErrors: false });

function resolve(schema: Schema): Schema {
  const r = schema.$ref;
  return typeof r === 'string' ? doc.components.schemas[r.replace('#/components/schemas/', '')]! : schema;
}

const printable = fc.string({ unit: 'grapheme-ascii', maxLength: 24 });

/** Strings of each named format the request models publish (core/schema.ts INPUT_FORMATS): some that conform, some that do not. */
const FORMAT_SAMPLES: Record<string, { valid: string[]; invalid: string[] }> = {
  [INPUT_FORMATS.name]: { valid: ['alpha', 'team_notes', 'Wing 2', "o'brien-notes"], invalid: ['a/b', '..', '{'] },
  [INPUT_FORMATS.dateBound]: { valid: ['2026-01-02', '2026-01-02T03:04:05Z'], invalid: ['yesterday', '2026-13-40'] },
  [INPUT_FORMATS.sourceFileFilter]: { valid: ['/srv/notes/a.md', 'notes/a.md'], invalid: ['bad\u0000path'] },
};
// The test's own reading of the document: a named format refuses exactly the samples listed as not conforming.
for (const [format, { invalid }] of Object.entries(FORMAT_SAMPLES)) ajv.addFormat(format, { type: 'string', validate: (v: string) => !invalid.includes(v) });

/** Values valid by a (request) schema: the keywords the request models use. */
function arbitrary(raw: Schema): fc.Arbitrary<unknown> {
  const schema = resolve(raw);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  switch (schema.type) {
    case 'string': {
      if (typeof schema.format === 'string' && schema.format in FORMAT_SAMPLES) return fc.constantFrom(...FORMAT_SAMPLES[schema.format]!.valid);
      const s = fc.oneof(printable, fc.string({ maxLength: 24 }), fc.constantFrom('.', '/', '~', '../..', 'main', 'https://example.invalid/r.git'));
      const bounded = typeof schema.maxLength === 'number' ? s.map((v) => v.slice(0, schema.maxLength as number)) : s;
      return typeof schema.pattern === 'string' ? bounded.filter((v) => new RegExp(schema.pattern as string, 'u').test(v)) : bounded;
    }
    case 'integer':
      return fc.integer({ min: (schema.minimum as number | undefined) ?? -1000, max: (schema.maximum as number | undefined) ?? 1000 });
    case 'number':
      return fc.double({ min: (schema.minimum as number | undefined) ?? -10, max: (schema.maximum as number | undefined) ?? 10, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(arbitrary(schema.items as Schema), { maxLength: 3 });
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      if (Object.keys(props).length === 0) return fc.constant({});
      return fc.record(Object.fromEntries(Object.entries(props).map(([k, s]) => [k, arbitrary(s)])), { requiredKeys: (schema.required ?? []) as string[] });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** A value the property's schema refuses, when there is one of a kind the request models use. */
function invalidValue(raw: Schema): unknown[] {
  const schema = resolve(raw);
  const out: unknown[] = [];
  if (Array.isArray(schema.enum)) out.push('not-a-member');
  if (schema.type === 'string') out.push(42);
  if (schema.type === 'string' && schema.pattern === '\\S') out.push('   ');
  if (schema.type === 'string' && typeof schema.format === 'string' && schema.format in FORMAT_SAMPLES) out.push(...FORMAT_SAMPLES[schema.format]!.invalid);
  if (schema.type === 'integer') out.push('seven', 1.5);
  if (schema.type === 'integer' && typeof schema.minimum === 'number') out.push(schema.minimum - 1);
  if (schema.type === 'integer' && typeof schema.maximum === 'number') out.push(schema.maximum + 1);
  if (schema.type === 'number') out.push('far');
  if (schema.type === 'boolean') out.push('yes');
  if (schema.type === 'array') out.push('one');
  return out;
}

const validators = new Map<Schema, ValidateFunction>();
function conforms(schema: Schema, value: unknown): { ok: boolean; errors: string } {
  let fn = validators.get(schema);
  if (!fn) {
    fn = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')) as Schema);
    validators.set(schema, fn);
  }
  const ok = fn(value);
  return { ok, errors: ajv.errorsText(fn.errors) };
}

interface Call {
  method: string;
  path: string;
  query: Record<string, string>;
  body?: unknown;
}

describe('the HTTP API against its OpenAPI document', () => {
  let h: ApiHarness;
  let root: string;
  const seen = new Map<string, Set<number>>();

  beforeAll(async () => {
    root = tempDir('fuzz-root');
    fs.mkdirSync(path.join(root, 'empty'));
    // Generated sources must never reach a real directory: everything outside this root is refused.
    h = await startApi({ env: { MEMPALACE_ALLOWED_ROOTS: root } });
    doc = (await (await h.call('/v1/openapi.json', { token: null })).json()) as Doc;
    ajv.addSchema({ $id: 'doc', components: doc.components });
  });
  afterAll(async () => {
    await h?.close();
  });

  /** Send one call and check the answer against the document; returns the status and JSON body. */
  async function send(op: Operation, call: Call): Promise<{ status: number; body: Record<string, unknown> }> {
    const qs = new URLSearchParams(call.query).toString();
    const label = `${call.method.toUpperCase()} ${call.path}${qs ? `?${qs}` : ''} ${JSON.stringify(call.body)?.slice(0, 200) ?? ''}`;
    const res = await h.call(`${call.path}${qs ? `?${qs}` : ''}`, { method: call.method.toUpperCase(),
      ...(call.body === undefined ? {} : { body: call.body }) });
    const documented = op.responses[String(res.status)];
    const text = await res.text();
    expect(documented, `${label} answered ${res.status}, which the document does not list: ${text.slice(0, 300)}`).toBeDefined();
    const schema = documented!.content?.['application/json']?.schema;
    const body = text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) as Record<string, unknown> : {};
    if (schema) {
      const check = conforms(schema, body);
      expect(check.ok, `${label} ${res.status} body does not match its documented schema: ${check.errors}\n${text.slice(0, 300)}`).toBe(true);
    }
    const key = `${call.method.toUpperCase()} ${call.path.split('?')[0]}`;
    if (!seen.has(key)) seen.set(key, new Set());
    seen.get(key)!.add(res.status);
    return { status: res.status, body };
  }

  /** The operations to fuzz: JSON answers only (the SSE streams and /metrics are checked elsewhere). */
  function operations(): { path: string; method: string; op: Operation }[] {
    const out: { path: string; method: string; op: Operation }[] = [];
    for (const [p, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (!METHODS.includes(method)) continue;
        const success = Object.entries(op.responses).find(([status]) => status.startsWith('2'))?.[1];
        if (!success?.content?.['application/json']) continue;
        // The webhook is authenticated by a signature, not a token; its own tests cover it.
        if (p === '/v1/hooks/git') continue;
        out.push({ path: p, method, op });
      }
    }
    return out;
  }

  function requestArbitrary(p: string, method: string, op: Operation): fc.Arbitrary<Call> {
    const pathParams = (op.parameters ?? []).filter((x) => x.in === 'path');
    const queryParams = (op.parameters ?? []).filter((x) => x.in === 'query');
    const bodySchema = op.requestBody?.content['application/json']?.schema;
    return fc.record({
      pathValues: fc.tuple(
        ...pathParams.map((x) => (Array.isArray(x.schema.enum) ? fc.constantFrom(...(x.schema.enum as string[])) : fc.stringMatching(/^[a-z0-9_]{1,12}$/))),
      ),
      query: fc.record(Object.fromEntries(queryParams.map((x) => [x.name, arbitrary(x.schema).map(String)])), {
        requiredKeys: queryParams.filter((x) => x.required).map((x) => x.name),
      }),
      body: bodySchema ? (op.requestBody!.required ? arbitrary(bodySchema) : fc.option(arbitrary(bodySchema), { nil: undefined })) : fc.constant(undefined),
    }).map(({ pathValues, query, body }) => {
      let i = 0;
      const filled = p.replace(/\{[^}]+\}/g, () => encodeURIComponent(String(pathValues[i++])));
      return { method, path: filled, query: query as Record<string, string>, ...(body === undefined ? {} : { body }) };
    });
  }

  it('answers documented-valid requests with a documented status and body, never a 400 the document does not allow', async () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThan(15);
    for (const { path: p, method, op } of ops) {
      const allowed = new Set(op.responses['400']?.['x-rules'] ?? []);
      await fc.assert(fc.asyncProperty(requestArbitrary(p, method, op), async (call) => {
        const bodySchema = op.requestBody?.content['application/json']?.schema;
        if (bodySchema && call.body !== undefined) expect(conforms(bodySchema, call.body).ok, 'generator produced an invalid body').toBe(true);
        const { status, body } = await send(op, call);
        // 400s of operations without a request model name their own checks (an unknown dead letter, a cursor).
        if (status === 400 && (bodySchema || op.responses['400']?.['x-rules'])) {
          expect(allowed.has(String(body.rule)),
            `${method.toUpperCase()} ${call.path} refused a documented-valid request: ${JSON.stringify(call)} → ${JSON.stringify(body)}`).toBe(true);
        }
      }), { numRuns: RUNS });
    }
  });

  it('refuses a request invalid in one field with 400 naming that field', async () => {
    const bodyOps = operations().filter(({ op }) => op.requestBody?.content['application/json']?.schema);
    const queryOps = operations().filter(({ op }) => op.responses['400']?.['x-rules'] && (op.parameters ?? []).some((x) => x.in === 'query'));
    expect(bodyOps.length).toBeGreaterThanOrEqual(5);
    expect(queryOps.length).toBeGreaterThanOrEqual(3);
    let refused = 0;
    for (const { path: p, method, op } of bodyOps) {
      const model = resolve(op.requestBody!.content['application/json']!.schema);
      const props = Object.entries(model.properties as Record<string, Schema>);
      const required = (model.required ?? []) as string[];
      const mutations = fc.oneof(
        ...props.filter(([name, s]) => refusedValues(op, name, s).length > 0).map(([name, s]) =>
          fc.record({ field: fc.constant(name), value: fc.constantFrom(...refusedValues(op, name, s)), kind: fc.constant('value') })
        ),
        fc.record({ field: fc.stringMatching(/^x_[a-z]{1,8}$/), value: fc.jsonValue({ maxDepth: 1 }), kind: fc.constant('unknown') }),
        ...(required.length > 0 ? [fc.record({ field: fc.constantFrom(...required), value: fc.constant(undefined), kind: fc.constant('missing') })] : []),
      );
      await fc.assert(fc.asyncProperty(arbitrary(model), mutations, async (valid, m) => {
        const bad: Record<string, unknown> = { ...(valid as Record<string, unknown>) };
        if (m.kind === 'missing') delete bad[m.field];
        else bad[m.field] = m.value;
        expect(conforms(model, bad).ok, `mutation left ${JSON.stringify(bad)} valid`).toBe(false);
        const { status, body } = await send(op, { method, path: p, query: {}, body: bad });
        expect([status, body.code, body.field], `${method.toUpperCase()} ${p} ${JSON.stringify(bad)} → ${JSON.stringify(body)}`).toEqual([400,
          'invalid_argument', m.field]);
        refused += 1;
      }), { numRuns: RUNS });
      // A body that is not an object is refused as a whole.
      const { status, body } = await send(op, { method, path: p, query: {}, body: [1, 2] });
      expect([status, body.field]).toEqual([400, 'body']);
    }
    for (const { path: p, method, op } of queryOps) {
      const params = (op.parameters ?? []).filter((x) => x.in === 'query');
      const base = fc.record(Object.fromEntries(params.map((x) => [x.name, arbitrary(x.schema).map(String)])), {
        requiredKeys: params.filter((x) => x.required).map((x) => x.name),
      });
      const mutations = fc.oneof(
        ...params.filter((x) => x.schema.type === 'integer' || x.schema.type === 'number' || Array.isArray(x.schema.enum))
          .map((x) =>
            fc.record({ field: fc.constant(x.name), value: fc.constantFrom('not-a-value', ...refusedValues(op, x.name, x.schema).filter((v) =>
              typeof v === 'number'
            ).map(String)) })
          ),
        fc.record({ field: fc.stringMatching(/^x_[a-z]{1,8}$/), value: fc.constant('1') }),
      );
      await fc.assert(fc.asyncProperty(base, mutations, async (valid, m) => {
        const query = { ...(valid as Record<string, string>), [m.field]: m.value };
        const { status, body } = await send(op, { method, path: p, query });
        expect([status, body.code, body.field], `${method.toUpperCase()} ${p}?${new URLSearchParams(query).toString()} → ${JSON.stringify(body)}`).toEqual([400,
          'invalid_argument', m.field]);
        refused += 1;
      }), { numRuns: RUNS });
    }
    expect(refused).toBeGreaterThan(100);
  });

  it('reached success and refusal answers across the API', () => {
    const statuses = [...seen.values()].flatMap((s) => [...s]);
    expect(statuses).toEqual(expect.arrayContaining([200, 202, 400, 404]));
  });
});
