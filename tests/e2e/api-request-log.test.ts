/**
 * The request log of `mempalace serve`: one record per request with a request id (the client's
 * `X-Request-Id` when sane, else a UUID, echoed in the response), and no credential in any record
 * — bearer tokens, refused tokens, token query values — whatever the route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiHarness } from './api-harness.js';
import { startApi } from './api-harness.js';
import type { CapturedLog, LogRecord } from '../helpers/log.js';
import { capturedLogger } from '../helpers/log.js';

let h: ApiHarness;
let logs: CapturedLog;

beforeAll(async () => {
  logs = capturedLogger('trace');
  h = await startApi({ log: logs.log });
}, 120_000);

afterAll(async () => {
  await h?.close();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
type RequestRecord = LogRecord & { reqId: string; req: { url: string; headers: Record<string, string> }; res: { statusCode: number } };

/** The completion record of the request with this id (pino-http writes it when the response ends). */
async function completed(reqId: string): Promise<RequestRecord> {
  for (let i = 0; i < 100; i++) {
    const found = logs.records.find((r) => r.reqId === reqId && r.res !== undefined);
    if (found) return found as RequestRecord;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no request record with reqId ${reqId}`);
}

describe('HTTP request logs', () => {
  it('give each request an id, echoed in X-Request-Id, and log its status without the bearer token or token query values', async () => {
    const res = await h.call('/v1/jobs', { token: 'tok-admin' });
    expect(res.status).toBe(200);
    const id = res.headers.get('x-request-id')!;
    expect(id).toMatch(UUID);
    const record = await completed(id);
    expect(record).toMatchObject({ level: 30, res: { statusCode: 200 }, req: { method: 'GET', url: '/v1/jobs', headers: { authorization: '[redacted]' } } });
    const probe = await h.call('/healthz?token=sk-query-secret&x=1', { token: 'tok-admin' });
    expect((await completed(probe.headers.get('x-request-id')!)).req.url).toBe('/healthz?token=[redacted]&x=1');
    const text = JSON.stringify(logs.records);
    expect(text).not.toContain('tok-admin');
    expect(text).not.toContain('sk-query-secret');
  });

  it('keeps a sane client request id and replaces one that is not', async () => {
    const kept = await h.call('/v1/jobs', { headers: { 'x-request-id': 'trace-42.a' } });
    expect(kept.headers.get('x-request-id')).toBe('trace-42.a');
    expect((await completed('trace-42.a')).res.statusCode).toBe(200);
    const replaced = await h.call('/v1/jobs', { headers: { 'x-request-id': 'not an id; {"x":1}' } });
    expect(replaced.headers.get('x-request-id')).toMatch(UUID);
  });

  it('logs a refused token as a warning without the token', async () => {
    const res = await h.call('/v1/jobs', { token: 'tok-wrong-secret-9' });
    expect(res.status).toBe(401);
    const record = await completed(res.headers.get('x-request-id')!);
    expect(record).toMatchObject({ level: 40, res: { statusCode: 401 } });
    expect(JSON.stringify(logs.records)).not.toContain('tok-wrong-secret-9');
  });

  it('logs MCP requests over /mcp without the token', async () => {
    const client = await h.mcpClient('tok-alice');
    expect((await client.listTools()).tools.length).toBe(45);
    const mcpRecords = logs.records.filter((r) => (r as Partial<RequestRecord>).req?.url === '/mcp' && r.res !== undefined);
    expect(mcpRecords.length).toBeGreaterThan(0);
    expect(JSON.stringify(logs.records)).not.toContain('tok-alice');
  });

  it('logs probes at debug, so LOG_LEVEL=info leaves them out', async () => {
    const res = await h.call('/healthz', { token: null });
    expect(res.status).toBe(200);
    expect((await completed(res.headers.get('x-request-id')!)).level).toBe(20);
  });
});
