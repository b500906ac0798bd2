/**
 * Traces of `serve` at a real OpenTelemetry Collector: a REST request's HTTP server span (HTTP
 * server conventions) continues the caller's `traceparent` header and parents the operation and
 * store spans; an MCP tool call over HTTP whose `params._meta` carries a `traceparent` continues
 * that trace (the tools/call span's parent is the caller's span). Embedded profile.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app.js';
import { Authenticator } from '../../api/auth.js';
import type { Listening } from '../../api/server.js';
import { listen } from '../../api/server.js';
import { loadConfig } from '../../app/config.js';
import { openRuntime } from '../../app/runtime.js';
import { activeTracing } from '../../app/tracing/sdk.js';
import { PalaceMcp } from '../../mcp/server.js';
import type { Collector } from '../helpers/otel-collector.js';
import { descendsFrom, startCollector } from '../helpers/otel-collector.js';
import { quietLogger } from '../helpers/log.js';

const TOKEN = 'tok-traced';
/** SpanKind.SERVER as OTLP numbers it (SPAN_KIND_SERVER). */
const OTLP_SERVER = 2;

let collector: Collector;
let server: Listening;
let mcp: PalaceMcp;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mempalace-tracing-rest-'));

/** A W3C traceparent of a caller's span that is not in any trace the server has seen. */
function callerSpan(): { traceId: string; spanId: string; traceparent: string } {
  const hex = (n: number) => [...crypto.getRandomValues(new Uint8Array(n))].map((b) => b.toString(16).padStart(2, '0')).join('');
  const traceId = hex(16);
  const spanId = hex(8);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

beforeAll(async () => {
  collector = await startCollector();
  // Read by the SDK when the runtime starts it (once per process).
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = collector.endpoint;
  process.env.OTEL_BSP_SCHEDULE_DELAY = '100';
  const config = loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: path.join(dir, 'palace') });
  const rt = await openRuntime(config, { role: 'serve', log: quietLogger() });
  mcp = new PalaceMcp(rt, { home: path.join(dir, 'home'), log: quietLogger() });
  const api = createApp(rt, { mcp, auth: Authenticator.fromTokens([[TOKEN, { identity: 'tracer', scopes: ['read'] }]]), log: quietLogger() });
  api.mcp.start();
  server = await listen(api.app, '127.0.0.1', 0);
});

afterAll(async () => {
  await server?.close();
  await mcp?.close();
  await collector?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('traces of serve', () => {
  it("a REST request's HTTP server span arrives, continuing the caller's traceparent, with the operation and store spans below it", async () => {
    const caller = callerSpan();
    const res = await fetch(`${server.url}/v1/taxonomy`, { headers: { authorization: `Bearer ${TOKEN}`, traceparent: caller.traceparent } });
    expect(res.status).toBe(200);
    await (await activeTracing())?.flush();

    const spans = await collector.waitFor((all) => all.some((s) => s.traceId === caller.traceId && s.name === 'GET /v1/taxonomy'));
    const http = spans.find((s) => s.traceId === caller.traceId && s.name === 'GET /v1/taxonomy')!;
    expect(http.service).toBe('mempalace-serve');
    expect(http.kind).toBe(OTLP_SERVER);
    expect(http.parentSpanId).toBe(caller.spanId);
    expect(http.attributes).toMatchObject({ 'http.request.method': 'GET', 'http.route': '/v1/taxonomy', 'http.response.status_code': 200,
      'url.path': '/v1/taxonomy', 'url.scheme': 'http' });
    const stores = await collector.waitFor((all) => all.some((s) => s.traceId === caller.traceId && s.attributes['db.system.name'] === 'sqlite'));
    const below = stores.filter((s) => s.traceId === caller.traceId && s.attributes['db.system.name'] === 'sqlite');
    expect(below.length).toBeGreaterThan(0);
    for (const s of below) expect(descendsFrom(stores, s, http)).toBe(true);
  });

  it('an MCP tool call whose params._meta carries a traceparent continues that trace; without it, the call stays in its HTTP request', async () => {
    const client = new Client({ name: 'mempalace-tracing-rest', version: '1.0.0' });

    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }));
    const caller = callerSpan();
    try {
      const traced = await client.callTool({ name: 'mempalace_list_wings', arguments: {}, _meta: { traceparent: caller.traceparent } });
      expect(traced.isError).toBeFalsy();
      const plain = await client.callTool({ name: 'mempalace_list_rooms', arguments: {} });
      expect(plain.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    await (await activeTracing())?.flush();

    const toolName = 'tools/call mempalace_list_wings';
    const plainName = 'tools/call mempalace_list_rooms';
    const spans = await collector.waitFor((all) =>
      all.some((s) => s.traceId === caller.traceId && s.name === toolName) && all.some((s) => s.name === plainName)
      && all.some((s) => s.name === 'mempalace.operation list_wings')
    );
    const tool = spans.find((s) => s.traceId === caller.traceId && s.name === toolName)!;
    expect(tool.parentSpanId).toBe(caller.spanId);
    expect(tool.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'mempalace_list_wings' });
    const operation = spans.find((s) => s.traceId === caller.traceId && s.name === 'mempalace.operation list_wings');
    expect(operation?.parentSpanId).toBe(tool.spanId);

    // The call without `_meta` stays in the trace of its HTTP request.
    const plainTool = spans.find((s) => s.name === plainName)!;
    expect(plainTool.traceId).not.toBe(caller.traceId);
    const request = spans.find((s) => s.spanId === plainTool.parentSpanId);
    expect(request).toMatchObject({ kind: OTLP_SERVER, attributes: expect.objectContaining({ 'http.request.method': 'POST', 'url.path': '/mcp' }) });
  });
});
