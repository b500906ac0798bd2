/**
 * Fuzzing the HTTP surface for a bounded time: random and malformed JSON, wrong content types,
 * random query strings and near-valid bodies go to every REST route and to /mcp (raw JSON-RPC
 * with random methods, tools and arguments). The server must never answer 500, must always
 * answer an error with a structured body, and must still be healthy afterwards.
 */
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOLS } from '../../mcp/registry.js';
import type { ApiHarness } from './api-harness.js';
import { startApi, tempDir } from './api-harness.js';

const REST_SECONDS = 10;
const MCP_SECONDS = 10;

const ROUTES: { method: string; path: string }[] = [
  { method: 'POST', path: '/v1/jobs/mine' },
  { method: 'POST', path: '/v1/jobs/sync' },
  { method: 'POST', path: '/v1/jobs/delete_by_source' },
  { method: 'POST', path: '/v1/search' },
  { method: 'GET', path: '/v1/search' },
  { method: 'GET', path: '/v1/jobs' },
  { method: 'GET', path: '/v1/jobs/{id}' },
  { method: 'POST', path: '/v1/jobs/{id}/cancel' },
  { method: 'GET', path: '/v1/status' },
  { method: 'GET', path: '/v1/taxonomy' },
  { method: 'GET', path: '/sync/peers' },
  { method: 'GET', path: '/logstream/stream' },
  { method: 'GET', path: '/v1/jobs/{id}/events' },
  { method: 'PUT', path: '/v1/status' },
  { method: 'DELETE', path: '/v1/jobs/{id}' },
];
const FIELDS = ['source', 'ref', 'mode', 'wing', 'agent', 'limit', 'dry_run', 'extract', 'respect_gitignore', 'include_ignored', 'project_dir', 'apply',
  'source_file', 'query', 'room', 'since', 'before', 'max_distance', 'candidate_strategy', 'stream', 'type', 'to_agent', 'since_event_id', 'status',
  '__proto__', 'constructor'];

const anyJson = fc.jsonValue({ maxDepth: 3 });
const nearValidBody = fc.dictionary(fc.constantFrom(...FIELDS),
  fc.oneof(anyJson, fc.string(), fc.integer(), fc.constantFrom('projects', 'convos', 'vector', 'union', '.', '/', '', '../..', 'evt_x')), { maxKeys: 5 });
const rawBody = fc.oneof(
  anyJson.map((v) => JSON.stringify(v)),
  nearValidBody.map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 200 }),
  fc.constantFrom('{', '{"query":', '[1,2', '{"a":1}}', 'null', '"text"', '\u0000', '{"source":"\\ud800"}', ''),
);
const queryString = fc.dictionary(fc.constantFrom(...FIELDS, 'limit', 'order'),
  fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('-1', '0', '1e309', 'NaN', '%zz', '500')), { maxKeys: 4 })
  .map((q) => Object.entries(q).map(([k, v]) => `${encodeURIComponent(k)}=${v.startsWith('%') ? v : encodeURIComponent(v)}`).join('&'));
const contentType = fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', undefined, 'application/json; charset=latin1');

async function expectStructured(res: Response, label: string): Promise<void> {
  expect(res.status, label).not.toBe(500);
  expect(res.status, label).toBeLessThan(600);
  const type = res.headers.get('content-type') ?? '';
  if (type.startsWith('text/event-stream')) {
    await res.body?.cancel();
    return;
  }
  const text = await res.text();
  if (res.status === 503 && text === '') return;
  if (res.status >= 400) {
    const body = JSON.parse(text) as { error?: unknown; jsonrpc?: string };
    const message = body.jsonrpc ? (body.error as { message?: unknown } | undefined)?.message : body.error;
    expect(typeof message, `${label}: ${text.slice(0, 200)}`).toBe('string');
  }
}

describe('fuzzing the HTTP API', () => {
  let h: ApiHarness;
  let jobId: string;

  beforeAll(async () => {
    const root = tempDir('root');
    fs.mkdirSync(path.join(root, 'empty'));
    // Random sources must never reach a real directory: everything outside this root is refused.
    h = await startApi({ env: { MEMPALACE_ALLOWED_ROOTS: root }, sseMaxClients: 64 });
    const start = await h.call('/v1/jobs/mine', { token: 'tok-alice', body: { source: path.join(root, 'empty') } });
    jobId = ((await start.json()) as { job_id: string }).job_id;
  });
  afterAll(async () => {
    await h?.close();
  });

  it(`REST routes survive ${REST_SECONDS} s of random and malformed input`, async () => {
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ROUTES), rawBody, queryString, contentType, fc.constantFrom('tok-alice', 'tok-reader', 'tok-admin'),
        async (route, body, query, type, token) => {
          runs += 1;
          const p = route.path.replace('{id}', jobId) + (query ? `?${query}` : '');
          const res = await h.call(p, { token, method: route.method, ...(route.method === 'GET' ? {} : { rawBody: body }),
            headers: type ? { 'content-type': type } : {} });
          await expectStructured(res, `${route.method} ${p} ${JSON.stringify(body).slice(0, 120)}`);
        }),
      { interruptAfterTimeLimit: REST_SECONDS * 1000, numRuns: 1_000_000, markInterruptAsFailure: false },
    );
    expect(runs).toBeGreaterThan(100);
  });

  it(`/mcp survives ${MCP_SECONDS} s of random JSON-RPC`, async () => {
    const toolNames = TOOLS.map((t) => t.name);
    const message = fc.oneof(
      fc.record({
        jsonrpc: fc.constant('2.0'),
        id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 })),
        method: fc.constant('tools/call'),
        params: fc.record({ name: fc.oneof(fc.constantFrom(...toolNames), fc.string({ maxLength: 20 })), arguments: fc.oneof(nearValidBody, anyJson) }, {
          requiredKeys: ['name'],
        }),
      }),
      fc.record({ jsonrpc: fc.oneof(fc.constant('2.0'), fc.string({ maxLength: 4 })), id: fc.oneof(fc.integer(), fc.constant(null)),
        method: fc.oneof(fc.constantFrom('tools/list', 'resources/list', 'resources/read', 'initialize', 'ping'), fc.string({ maxLength: 12 })),
        params: anyJson }, { requiredKeys: ['method'] }),
    ).map((m) => JSON.stringify(m));
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(message, message.map((m) => `[${m}]`), rawBody), contentType, async (body, type) => {
        runs += 1;
        const res = await h.call('/mcp', { token: 'tok-alice', method: 'POST', rawBody: body,
          headers: { accept: 'application/json, text/event-stream', ...(type ? { 'content-type': type } : {}) } });
        await expectStructured(res, `/mcp ${body.slice(0, 160)}`);
      }),
      { interruptAfterTimeLimit: MCP_SECONDS * 1000, numRuns: 1_000_000, markInterruptAsFailure: false },
    );
    expect(runs).toBeGreaterThan(50);
  });

  it('is healthy and serves normal calls afterwards', async () => {
    expect((await h.call('/healthz')).status).toBe(200);
    const client = await h.mcpClient('tok-reader');
    const status = await client.callTool({ name: 'mempalace_status', arguments: {} });
    expect(status.isError).not.toBe(true);
    expect((await h.call('/v1/status', { token: 'tok-reader' })).status).toBe(200);
  });
});
