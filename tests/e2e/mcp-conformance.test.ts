/**
 * MCP conformance over both transports, driven by the official SDK client and raw JSON-RPC
 * (issue 15): cancellation of event_wait and of an attached mine, the JSON-RPC envelopes,
 * readable -32602s, isError on tool errors, -32602 for unknown tools and cursors, JSON-RPC bodies
 * for HTTP refusals with Retry-After, roots failing closed, progress with `total`, and output
 * schemas free of type arrays.
 */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ListRootsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiHarness } from './api-harness.js';
import { startApi } from './api-harness.js';
import type { Harness } from './mcp-harness.js';
import { ROOT, call, learnSchemas, makeProject, startHttp, startStdio, tempDir } from './mcp-harness.js';

type Rpc = { jsonrpc: string; id: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } };

const SERVER_ARGS = [path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), path.join(ROOT, 'tests', 'fixtures', 'mcp-stdio-server.ts')];

/** A stdio server spoken to line by line, without the SDK, to send what no SDK client would. */
class RawStdio {
  private buffer = '';
  private readonly waiting: ((line: Rpc) => void)[] = [];
  private readonly queued: Rpc[] = [];
  readonly child: ChildProcessWithoutNullStreams;

  constructor(env: Record<string, string>) {
    this.child = spawn(process.execPath, SERVER_ARGS, { env: { ...process.env, ...env }, cwd: ROOT });
    this.child.stderr.resume();
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => {
      this.buffer += chunk;
      let nl: number;
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const msg = JSON.parse(this.buffer.slice(0, nl)) as Rpc;
        this.buffer = this.buffer.slice(nl + 1);
        const w = this.waiting.shift();
        if (w) w(msg);
        else this.queued.push(msg);
      }
    });
  }

  write(text: string): void {
    this.child.stdin.write(`${text}\n`);
  }

  next(): Promise<Rpc> {
    const q = this.queued.shift();
    return q ? Promise.resolve(q) : new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Send one line and read the one reply it gets. */
  async exchange(text: string): Promise<Rpc> {
    this.write(text);
    return this.next();
  }

  close(): void {
    this.child.stdin.end();
  }
}

const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

/** The malformed inputs of issue 15 item 2–3 and the answer each must get, on either transport. */
const ENVELOPE_CASES: { name: string; body: string; code: number; id: unknown; message?: RegExp }[] = [
  { name: 'non-JSON text', body: '{not json', code: -32700, id: null },
  { name: 'a batch array', body: JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'ping' }]), code: -32600, id: null, message: /batch/i },
  { name: 'a bare JSON string', body: '"hello"', code: -32600, id: null },
  { name: 'string params', body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping', params: 'x' }), code: -32602, id: 3,
    message: /'params' must be an object/ },
  { name: 'a numeric method', body: JSON.stringify({ jsonrpc: '2.0', id: 4, method: 5 }), code: -32600, id: 4, message: /'method' must be a string/ },
  { name: 'initialize without protocolVersion',
    body: JSON.stringify({ ...INIT, id: 5, params: { capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }), code: -32602, id: 5,
    message: /'protocolVersion' is required/ },
  { name: 'tools/call without a name', body: JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: {} }), code: -32602, id: 6,
    message: /'name' is required for tools\/call/ },
  { name: 'tools/call with a numeric name', body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 7 } }), code: -32602, id: 7,
    message: /'name' must be a string/ },
  { name: 'tools/call with array arguments',
    body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'mempalace_status', arguments: [] } }), code: -32602, id: 8,
    message: /'arguments' an object/ },
  { name: 'resources/read without a uri', body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'resources/read', params: {} }), code: -32602, id: 9,
    message: /'uri' is required/ },
];

const NULL_ARGUMENTS = JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'mempalace_list_wings', arguments: null } });

/** Nothing in an output schema may spell a type as an array (Inspector --strict portability). */
function typeArrays(schema: unknown, at = ''): string[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const found: string[] = [];
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'type' && Array.isArray(v)) found.push(at);
    found.push(...typeArrays(v, `${at}/${k}`));
  }
  return found;
}

describe('stdio transport', () => {
  let raw: RawStdio;
  beforeAll(async () => {
    raw = new RawStdio({ MEMPALACE_PALACE: tempDir('palace'), MEMPALACE_TEST_HOME: tempDir('home') });
    expect((await raw.exchange(JSON.stringify(INIT))).result?.protocolVersion).toBe('2025-11-25');
    raw.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  });
  afterAll(() => raw.close());

  it.each(ENVELOPE_CASES)('answers $name with $code', async ({ body, code, id, message }) => {
    const reply = await raw.exchange(body);
    expect(reply.jsonrpc).toBe('2.0');
    expect(reply.id).toEqual(id);
    expect(reply.error?.code).toBe(code);
    if (message) expect(reply.error?.message).toMatch(message);
  });

  it('treats null arguments as {}', async () => {
    const reply = await raw.exchange(NULL_ARGUMENTS);
    expect(reply.error).toBeUndefined();
    expect(reply.result?.isError).toBeUndefined();
  });

  it('answers an oversized line with an error and keeps serving', async () => {
    const huge = JSON.stringify({ jsonrpc: '2.0', id: 11, method: 'ping', params: { pad: 'x'.repeat(17 * 1024 * 1024) } });
    const reply = await raw.exchange(huge);
    expect(reply).toMatchObject({ id: null, error: { code: -32600 } });
    expect(reply.error?.message).toContain('limit');
    expect(await raw.exchange(JSON.stringify({ jsonrpc: '2.0', id: 12, method: 'ping' }))).toEqual({ jsonrpc: '2.0', id: 12, result: {} });
  });

  it('answers nothing to a malformed notification, and serves on', async () => {
    raw.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/whatever', params: 'x' }));
    expect(await raw.exchange(JSON.stringify({ jsonrpc: '2.0', id: 13, method: 'ping' }))).toEqual({ jsonrpc: '2.0', id: 13, result: {} });
  });
});

describe('HTTP transport envelopes', () => {
  let h: Harness;
  const post = (body: string) =>
    fetch(h.url!, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer tok-admin' },
    });
  beforeAll(async () => {
    h = await startHttp();
  });
  afterAll(async () => h.close());

  it.each(ENVELOPE_CASES)('answers $name with $code', async ({ body, code, id, message }) => {
    const res = await post(body);
    expect(res.status).toBe(id === null ? 400 : 200);
    const reply = (await res.json()) as Rpc;
    expect(reply.jsonrpc).toBe('2.0');
    expect(reply.id).toEqual(id);
    expect(reply.error?.code).toBe(code);
    if (message) expect(reply.error?.message).toMatch(message);
  });

  it('treats null arguments as {}', async () => {
    const res = await post(NULL_ARGUMENTS);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('"result"');
    expect(text).not.toContain('"isError"');
  });
});

for (const kind of ['stdio', 'http'] as const) {
  describe(`${kind}: SDK client conformance`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = kind === 'stdio' ? await startStdio() : await startHttp();
      await learnSchemas(h.client);
    });
    afterAll(async () => h.close());

    it('flags tool-level errors with isError and keeps the payload in structuredContent', async () => {
      const missing = await call(h.client, 'mempalace_get_drawer', { drawer_id: 'drawer_nope_0' });
      expect(typeof missing.error).toBe('string');
      const ok = await h.client.callTool({ name: 'mempalace_list_wings', arguments: {} });
      expect(ok.isError).toBeUndefined();
    });

    it('answers an unknown tool and a bogus cursor with -32602', async () => {
      await expect(h.client.callTool({ name: 'mempalace_nonexistent', arguments: {} })).rejects.toMatchObject({ code: -32602 });
      await expect(h.client.listTools({ cursor: 'bogus' })).rejects.toMatchObject({ code: -32602 });
      await expect(h.client.listResources({ cursor: 'bogus' })).rejects.toMatchObject({ code: -32602 });
    });

    it('publishes output schemas without type arrays', async () => {
      const { tools } = await h.client.listTools();
      expect(tools.length).toBeGreaterThan(0);
      expect(tools.flatMap((t) => typeArrays(t.outputSchema, t.name))).toEqual([]);
    });

    it('sends progress with the file total and a message', async () => {
      // Big enough that the job is observed mid-run: the SDK client drops a notification that
      // arrives in the same read as the response (it handles notifications a microtask later).
      const files = 120;
      const project = makeProject(files);
      const seen: Progress[] = [];
      const mined = await call(h.client, 'mempalace_mine', { source: project, wing: `prog_${kind}` }, { onprogress: (p) => seen.push(p) });
      expect(mined.success).toBe(true);
      expect(seen.length).toBeGreaterThan(0);
      const withTotal = seen.filter((p) => p.total !== undefined);
      expect(withTotal.length).toBeGreaterThan(0);
      expect(withTotal.every((p) => p.total === files)).toBe(true);
      expect(seen.every((p) => typeof p.message === 'string' && p.message.length > 0 && p.message.length < 120)).toBe(true);
      const values = seen.map((p) => p.progress);
      expect(values).toEqual([...values].sort((a, b) => a - b));
      expect(new Set(values).size).toBe(values.length);
    });

    it('cancels an attached mine through the job engine, keeping its partial progress', async () => {
      const project = makeProject(300);
      const controller = new AbortController();
      const pending = call(h.client, 'mempalace_mine', { source: project, wing: `cancel_${kind}` }, {
        signal: controller.signal,
        onprogress: (p) => {
          if (p.progress > 0) controller.abort('enough');
        },
      });
      await expect(pending).rejects.toThrow();
      // The job is visible as a resource; poll it until the engine has settled it.
      let job: Record<string, unknown> = {};
      for (let i = 0; i < 600; i++) {
        const { resources } = await h.client.listResources();
        const uri = resources.find((r) => r.uri.startsWith('mempalace://job/') && r.title?.startsWith('mine'))?.uri;
        if (uri) {
          const read = await h.client.readResource({ uri });
          job = JSON.parse((read.contents[0] as { text: string }).text) as Record<string, unknown>;
          if (job.state !== 'running') break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(job.state).toBe('cancelled');
      expect(job.files_seen as number).toBeGreaterThan(0);
      expect(job.files_seen as number).toBeLessThan(300);
      // The lease is released: the same source can be mined again at once, and resumes.
      const again = await call(h.client, 'mempalace_mine', { source: project, wing: `cancel_${kind}` });
      expect(again.success).toBe(true);
    });

    it('returns event_wait at once when the request is cancelled', async () => {
      const controller = new AbortController();
      const pending = h.client.callTool({ name: 'mempalace_event_wait', arguments: { room: 'conformance', timeout_ms: 200000 } }, undefined, {
        signal: controller.signal,
        timeout: 250_000,
      });
      await new Promise((r) => setTimeout(r, 300));
      controller.abort('stop');
      await expect(pending).rejects.toThrow();
      // The server keeps answering the same client.
      expect((await call(h.client, 'mempalace_list_wings')).error).toBeUndefined();
    });
  });
}

describe('HTTP cancellation reaches the server', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHttp();
  });
  afterAll(async () => h.close());

  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer tok-admin' };
  const waitCall = (id: number) =>
    JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call',
      params: { name: 'mempalace_event_wait', arguments: { room: 'cancel-http', timeout_ms: 250000 } } });

  it('ends an event_wait when the same caller posts notifications/cancelled', async () => {
    const res = await fetch(h.url!, { method: 'POST', headers, body: waitCall(41) });
    expect(res.status).toBe(200);
    const body = res.text();
    await new Promise((r) => setTimeout(r, 300));
    const cancel = await fetch(h.url!, { method: 'POST', headers,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 41, reason: 'test' } }) });
    expect(cancel.status).toBe(202);
    // Without the cancel this body would only end after 250 s (past this test's timeout).
    expect(await body).not.toContain('"result"');
  }, 120_000);

  it('cancels an attached mine when the client closes the request', async () => {
    const project = makeProject(300);
    const controller = new AbortController();
    const body = JSON.stringify({ jsonrpc: '2.0', id: 44, method: 'tools/call',
      params: { name: 'mempalace_mine', arguments: { source: project, wing: 'closed_http' }, _meta: { progressToken: 'p44' } } });
    const res = await fetch(h.url!, { method: 'POST', headers, body, signal: controller.signal });
    expect(res.status).toBe(200);
    // Read the stream until the first progress notification with a seen file, then hang up.
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!/"progress":[1-9]/.test(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
    }
    controller.abort();
    let job = (await h.runtime!.jobs.list(5)).find((j) => j.kind === 'mine');
    for (let i = 0; i < 600 && job?.state === 'running'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      job = (await h.runtime!.jobs.list(5)).find((j) => j.kind === 'mine');
    }
    expect(job?.state).toBe('cancelled');
    expect(job!.files_seen).toBeGreaterThan(0);
    expect(job!.files_seen).toBeLessThan(300);
  });
});

describe('a job handed back as a job id', () => {
  let h: Harness;
  beforeAll(async () => {
    // No wait at all: with the default embedder a 60-note mine can finish inside a 1 s wait, and
    // the tool would return its result instead of the job id this test is about.
    h = await startHttp({ env: { MEMPALACE_MCP_JOB_WAIT_S: '0' } });
    await learnSchemas(h.client);
  });
  afterAll(async () => h.close());

  it('is not cancelled when its request ends', async () => {
    const project = makeProject(60);
    const running = await call(h.client, 'mempalace_mine', { source: project, wing: 'handed_back' });
    expect(running.status).toBe('running');
    const jobId = running.job_id as string;
    await h.client.close();
    const done = await h.runtime!.jobs.wait(jobId, 240_000);
    expect(done.state).toBe('completed');
    expect(done.files_seen).toBe(60);
  });
});

describe('roots fail closed on stdio', () => {
  const clients: Client[] = [];
  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
  });

  async function rootsClient(listRoots: () => Promise<{ roots: { uri: string }[] }>): Promise<Client> {
    const client = new Client({ name: 'roots-client', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } });
    client.setRequestHandler(ListRootsRequestSchema, listRoots);
    await client.connect(new StdioClientTransport({
      command: process.execPath,
      args: SERVER_ARGS,
      env: { ...process.env, MEMPALACE_PALACE: tempDir('palace'), MEMPALACE_TEST_HOME: tempDir('home') } as Record<string, string>,
      cwd: ROOT,
      stderr: 'ignore',
    }));
    clients.push(client);
    await learnSchemas(client);
    return client;
  }

  it('an empty root list allows no source', async () => {
    const client = await rootsClient(async () => ({ roots: [] }));
    const refused = await call(client, 'mempalace_mine', { source: makeProject(2) });
    expect(refused.error).toContain('offers no roots');
    expect((await call(client, 'mempalace_status')).total_drawers).toBe(0);
  });

  it('a failing roots/list refuses the call with a clear error', async () => {
    const client = await rootsClient(async () => {
      throw new McpError(-32603, 'roots are broken');
    });
    const refused = await call(client, 'mempalace_mine', { source: makeProject(2) });
    expect(refused.error).toContain('roots/list failed');
  });
});

describe('HTTP refusals are JSON-RPC bodies', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ rateLimit: { ratePerSecond: 1, burst: 2 } });
  });
  afterAll(async () => api.close());

  it('429 carries Retry-After and a JSON-RPC error; 403 on a foreign Origin too', async () => {
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    let limited: Response | undefined;
    for (let i = 0; i < 5 && !limited; i++) {
      const res = await api.call('/mcp', { method: 'POST', rawBody: ping, headers });
      if (res.status === 429) limited = res;
      else await res.arrayBuffer();
    }
    expect(limited).toBeDefined();
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await limited!.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000, message: expect.stringContaining('rate limit') } });
    await new Promise((r) => setTimeout(r, 2100));
    const foreign = await api.call('/mcp', { method: 'POST', rawBody: ping, headers: { ...headers, origin: 'http://evil.example' } });
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
  });
});

describe('the default rate limit', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    const { loadConfig } = await import('../../app/config.js');
    const config = loadConfig({});
    api = await startApi({ rateLimit: { ratePerSecond: config.api.ratePerSecond, burst: config.api.rateBurst } });
  });
  afterAll(async () => api.close());

  it('is not hit by a sequential SDK session calling as fast as it can', async () => {
    const client = new Client({ name: 'busy', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { requestInit: { headers: { Authorization: 'Bearer tok-admin' } } }));
    try {
      for (let i = 0; i < 300; i++) {
        const res = await client.callTool({ name: i % 2 ? 'mempalace_list_wings' : 'mempalace_kg_stats', arguments: {} });
        expect(res.isError).toBeUndefined();
      }
    } finally {
      await client.close();
    }
  });
});
