/**
 * The spans of one MCP tool call reach a real OpenTelemetry Collector as one trace: the tool
 * call span (MCP conventions) is the root, the palace operation its child, and every store call
 * (database client conventions, embedded profile: SQLite) below the operation.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRuntime } from '../../app/runtime.js';
import { activeTracing } from '../../app/tracing/sdk.js';
import { loadConfig } from '../../app/config.js';
import { PalaceMcp } from '../../mcp/server.js';
import type { CallContext } from '../../mcp/types.js';
import type { Collector } from '../helpers/otel-collector.js';
import { descendsFrom, rootsOf, startCollector } from '../helpers/otel-collector.js';
import { quietLogger } from '../helpers/log.js';

let collector: Collector;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mempalace-tracing-mcp-'));

beforeAll(async () => {
  collector = await startCollector();
  // Read by the SDK when the runtime starts it (once per process).
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = collector.endpoint;
  process.env.OTEL_BSP_SCHEDULE_DELAY = '100';
});

afterAll(async () => {
  await collector?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const call = (): CallContext => ({ caller: undefined, signal: new AbortController().signal, onJobProgress: undefined, clientRoots: async () => undefined });

describe('traces of an MCP tool call', () => {
  it('arrive at the collector as tool call → operation → store calls, in one trace', async () => {
    const config = loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: path.join(dir, 'palace') });
    const rt = await openRuntime(config, { role: 'mcp-stdio', log: quietLogger() });
    const mcp = new PalaceMcp(rt, { home: path.join(dir, 'home'), log: quietLogger() });
    try {
      const result = await mcp.callTool('mempalace_list_wings', {}, call());
      expect(result.isError).toBeFalsy();
      await (await activeTracing())?.flush();
    } finally {
      await mcp.close();
    }

    const toolName = 'tools/call mempalace_list_wings';
    const spans = await collector.waitFor((all) => {
      const tool = all.find((s) => s.name === toolName);
      return tool !== undefined && all.some((s) => s.traceId === tool.traceId && s.attributes['db.system.name'] === 'sqlite');
    });
    const tool = spans.find((s) => s.name === toolName)!;
    expect(tool.service).toBe('mempalace-mcp-stdio');
    expect(tool.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'mempalace_list_wings' });
    expect(rootsOf(spans, tool.traceId)).toEqual([tool]);

    const trace = spans.filter((s) => s.traceId === tool.traceId);
    const operation = trace.find((s) => s.name === 'mempalace.operation list_wings');
    expect(operation?.parentSpanId).toBe(tool.spanId);
    const storeCalls = trace.filter((s) => s.attributes['db.system.name'] === 'sqlite');
    expect(storeCalls.length).toBeGreaterThan(0);
    for (const s of storeCalls) {
      expect(descendsFrom(spans, s, operation!)).toBe(true);
      expect(typeof s.attributes['db.operation.name']).toBe('string');
      expect(s.name).toBe(`${String(s.attributes['db.operation.name'])} ${String(s.attributes['mempalace.store.port'])}`);
    }
  });
});
