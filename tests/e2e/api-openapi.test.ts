/**
 * The OpenAPI document and the Express router agree: every registered route is documented and
 * every documented operation is registered; and real responses for a sample of calls (successes
 * and errors) validate against the schema the document gives for their status code.
 */
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Router } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_DOCUMENT } from '../../api/openapi.js';
import { generateProject } from '../fixtures/generate-project.js';
import type { ApiHarness } from './api-harness.js';
import { readSse, startApi, tempDir } from './api-harness.js';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

interface RouteLayer {
  route?: { path: string; methods: Record<string, boolean> };
}

function routerOperations(router: Router): string[] {
  const ops: string[] = [];
  for (const layer of router.stack as unknown as RouteLayer[]) {
    if (!layer.route) continue;
    const p = layer.route.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    for (const [m, on] of Object.entries(layer.route.methods)) if (on && METHODS.includes(m)) ops.push(`${m.toUpperCase()} ${p}`);
  }
  return ops.sort();
}

function documentOperations(): string[] {
  const ops: string[] = [];
  for (const [p, item] of Object.entries(OPENAPI_DOCUMENT.paths)) {
    for (const m of Object.keys(item)) if (METHODS.includes(m)) ops.push(`${m.toUpperCase()} ${p}`);
  }
  return ops.sort();
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema({ $id: 'doc', components: OPENAPI_DOCUMENT.components });

function docRef(schema: object): object {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')) as object;
}

/** The documented data schema of each event an SSE operation sends. */
function streamEvents(docPath: string): Record<string, object> {
  const op = (OPENAPI_DOCUMENT.paths as Record<string, Record<string, { responses: Record<string, { 'x-sse-events'?: Record<string, object> }> }>>)[docPath]!
    .get!;
  return op.responses['200']!['x-sse-events']!;
}

function responseSchema(docPath: string, method: string, status: number): object {
  const op =
    (OPENAPI_DOCUMENT.paths as Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>>)[docPath]![
      method
    ]!;
  const response = op.responses[String(status)];
  if (!response) throw new Error(`${method.toUpperCase()} ${docPath} documents no ${status} response`);
  const schema = response.content?.['application/json']?.schema;
  if (!schema) throw new Error(`${method.toUpperCase()} ${docPath} ${status} has no JSON schema`);
  return docRef(schema);
}

describe('OpenAPI document', () => {
  let h: ApiHarness;
  let project: string;

  beforeAll(async () => {
    h = await startApi();
    project = path.join(tempDir('src'), 'openapi-project');
    await generateProject(project, 6, 3);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('is OpenAPI 3.1 and served at /v1/openapi.json without a token', async () => {
    const res = await h.call('/v1/openapi.json', { token: null });
    expect(res.status).toBe(200);
    const doc = (await res.json()) as typeof OPENAPI_DOCUMENT;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc).toEqual(JSON.parse(JSON.stringify(OPENAPI_DOCUMENT)));
    for (const name of Object.keys(OPENAPI_DOCUMENT.components.schemas))
      expect(() => ajv.compile({ $ref: `doc#/components/schemas/${name}` }), name).not.toThrow();
  });

  it('documents exactly the routes the router registers', () => {
    const registered = routerOperations(h.api.routes);
    expect(registered.length).toBeGreaterThan(10);
    expect(registered).toEqual(documentOperations());
  });

  it('answers with bodies that validate against the documented schema, for successes and errors', async () => {
    const samples: { docPath: string; method: string; path: string; token?: string | null; body?: unknown; rawBody?: string; status: number }[] = [
      { docPath: '/v1/status', method: 'get', path: '/v1/status', status: 200 },
      { docPath: '/v1/status', method: 'get', path: '/v1/status', token: null, status: 401 },
      { docPath: '/v1/taxonomy', method: 'get', path: '/v1/taxonomy', status: 200 },
      { docPath: '/v1/jobs/mine', method: 'post', path: '/v1/jobs/mine', body: { source: project, wing: 'oa' }, status: 202 },
      { docPath: '/v1/jobs/mine', method: 'post', path: '/v1/jobs/mine', body: { source: project, wing: 'oa' }, status: 409 },
      { docPath: '/v1/jobs/mine', method: 'post', path: '/v1/jobs/mine', token: 'tok-reader', body: { source: project }, status: 403 },
      { docPath: '/v1/jobs/mine', method: 'post', path: '/v1/jobs/mine', body: { source: project, limit: -1 }, status: 400 },
      { docPath: '/v1/jobs/mine', method: 'post', path: '/v1/jobs/mine', rawBody: `{"source":"${'z'.repeat(300_000)}"}`, status: 413 },
      { docPath: '/v1/jobs', method: 'get', path: '/v1/jobs?limit=3', status: 200 },
      { docPath: '/v1/jobs', method: 'get', path: '/v1/jobs?limit=0', status: 400 },
      { docPath: '/v1/jobs/{id}', method: 'get', path: '/v1/jobs/missing', status: 404 },
      { docPath: '/v1/search', method: 'get', path: '/v1/search?query=cursor%20lease&limit=2', status: 200 },
      { docPath: '/v1/search', method: 'post', path: '/v1/search', body: { query: 'retry backoff', limit: 2, candidate_strategy: 'vector' }, status: 200 },
      { docPath: '/v1/search', method: 'post', path: '/v1/search', rawBody: '{"query":', status: 400 },
      { docPath: '/sync/peers', method: 'get', path: '/sync/peers', status: 200 },
      { docPath: '/sync/version_vector', method: 'get', path: '/sync/version_vector', status: 200 },
      { docPath: '/sync/ops', method: 'get', path: '/sync/ops?origin=rep_000000000000', status: 200 },
      { docPath: '/sync/ops', method: 'get', path: '/sync/ops?origin=', status: 400 },
      { docPath: '/sync/artifact', method: 'get', path: '/sync/artifact?id=art_missing', status: 404 },
      { docPath: '/healthz', method: 'get', path: '/healthz', token: null, status: 200 },
      { docPath: '/logstream/stream', method: 'get', path: '/logstream/stream?status=bogus', status: 400 },
    ];
    let jobId = '';
    for (const s of samples) {
      const res = await h.call(s.path, {
        token: s.token === undefined ? 'tok-admin' : s.token,
        method: s.method.toUpperCase(),
        ...(s.body === undefined ? {} : { body: s.body }),
        ...(s.rawBody === undefined ? {} : { rawBody: s.rawBody, headers: { 'content-type': 'application/json' } }),
      });
      const body = (await res.json()) as Record<string, unknown>;
      expect(res.status, `${s.method} ${s.path}: ${JSON.stringify(body).slice(0, 300)}`).toBe(s.status);
      const validate = ajv.compile(responseSchema(s.docPath, s.method, s.status));
      expect(validate(body), `${s.method} ${s.path} ${s.status}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      if (s.status === 202) jobId = String(body.job_id);
    }
    // The started job, by id, while running or after, and its cancel.
    const one = await h.call(`/v1/jobs/${jobId}`);
    expect(ajv.compile(responseSchema('/v1/jobs/{id}', 'get', 200))(await one.json())).toBe(true);
    const cancel = await h.call(`/v1/jobs/${jobId}/cancel`, { method: 'POST' });
    expect(ajv.compile(responseSchema('/v1/jobs/{id}/cancel', 'post', 200))(await cancel.json())).toBe(true);
  });

  it('streams only the events it documents, each frame matching its documented schema', async () => {
    const admin = await h.mcpClient('tok-admin');
    await admin.callTool({ name: 'mempalace_event_append',
      arguments: { type: 'note', stream: 'project/openapi', room: 'general', from_agent: 'ops', body: 'stream schema check' } });
    const started = (await (await h.call('/v1/jobs/mine', { body: { source: project, wing: 'oa-stream', dry_run: true } })).json()) as { events_url: string };
    const append = () =>
      admin.callTool({ name: 'mempalace_event_append',
        arguments: { type: 'note', stream: 'project/openapi', room: 'general', from_agent: 'ops', body: 'live event' } });
    const streams: { docPath: string; url: string; until: (events: Set<string>) => boolean; opened?: () => Promise<unknown> }[] = [
      { docPath: '/v1/dashboard/stream', url: '/v1/dashboard/stream',
        until: (e) => ['jobs', 'stats', 'sources', 'notifications', 'metrics', 'health', 'logstream'].every((x) => e.has(x)) },
      { docPath: '/v1/jobs/{id}/events', url: started.events_url, until: (e) => e.has('end') },
      { docPath: '/logstream/stream', url: '/logstream/stream', until: (e) => e.has('logstream'), opened: append },
    ];
    for (const s of streams) {
      const documented = streamEvents(s.docPath);
      const res = await h.call(s.url);
      expect(res.status, s.url).toBe(200);
      await s.opened?.();
      const frames = await readSse(res, (fs) => s.until(new Set(fs.map((f) => f.event))), 60_000);
      expect(s.until(new Set(frames.map((f) => f.event))), `${s.url}: ${frames.map((f) => f.event).join(',')}`).toBe(true);
      for (const f of frames) {
        expect(Object.keys(documented), `${s.url} sent an undocumented event`).toContain(f.event);
        const validate = ajv.compile(docRef(documented[f.event]!));
        expect(validate(JSON.parse(f.data)), `${s.url} ${f.event}: ${ajv.errorsText(validate.errors)} ${f.data.slice(0, 300)}`).toBe(true);
      }
    }
  });
});
