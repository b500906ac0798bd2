/**
 * Shared setup of the HTTP API e2e tests: a temporary palace with the real runtime (SQLite
 * stores, MiniLM embedder, local job engine), the app of `mempalace serve` on an ephemeral
 * loopback port, and a small fetch helper that sends a bearer token.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Api, ApiOptions } from '../../api/app.js';
import { createApp } from '../../api/app.js';
import { Authenticator } from '../../api/auth.js';
import { listen } from '../../api/server.js';
import { openRuntime } from '../../app/runtime.js';
import type { Runtime } from '../../palace/runtime.js';
import { loadConfig } from '../../app/config.js';
import { PalaceMcp } from '../../mcp/server.js';
import type { Caller } from '../../core/caller.js';
import { quietLogger } from '../helpers/log.js';

export const API_TOKENS: [string, Caller][] = [
  ['tok-reader', { identity: 'reader', scopes: ['read'] }],
  ['tok-alice', { identity: 'alice', scopes: ['read', 'write'] }],
  ['tok-admin', { identity: 'ops', scopes: ['admin'] }],
];

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `mempalace-api-${prefix}-`));
}

export interface ApiHarness {
  url: string;
  palaceDir: string;
  runtime: Runtime;
  api: Api;
  /** fetch against the server with `Authorization: Bearer <token>` (no header when token is null). */
  call(pathname: string,
    init?: { token?: string | null; method?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> }): Promise<Response>;
  mcpClient(token: string): Promise<Client>;
  close(): Promise<void>;
}

export interface HarnessOptions extends ApiOptions {
  env?: Record<string, string>;
}

export async function startApi(opts: HarnessOptions = {}): Promise<ApiHarness> {
  const palaceDir = tempDir('palace');
  const config = loadConfig({ ...process.env, MEMPALACE_PALACE: palaceDir, MEMPALACE_MCP_JOB_WAIT_S: '1', ...opts.env });
  const runtime = await openRuntime(config);
  const mcp = new PalaceMcp(runtime, { home: tempDir('home'), log: quietLogger() });
  const api = createApp(runtime, { mcp, auth: Authenticator.fromTokens(API_TOKENS), rateLimit: { ratePerSecond: 1000, burst: 1000 }, log: quietLogger(),
    ...opts });
  api.mcp.start();
  const server = await listen(api.app, '127.0.0.1', 0);
  const clients: Client[] = [];
  return {
    url: server.url,
    palaceDir,
    runtime,
    api,
    call(pathname, init = {}) {
      const headers: Record<string, string> = { ...(init.headers ?? {}) };
      const token = init.token === undefined ? 'tok-admin' : init.token;
      if (token !== null) headers.authorization = `Bearer ${token}`;
      let body: string | undefined = init.rawBody;
      if (init.body !== undefined) {
        body = JSON.stringify(init.body);
        headers['content-type'] ??= 'application/json';
      }
      return fetch(`${server.url}${pathname}`, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers,
        ...(body === undefined ? {} : { body }) });
    },
    async mcpClient(token) {
      const client = new Client({ name: 'mempalace-api-e2e', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
      clients.push(client);
      return client;
    },
    async close() {
      await Promise.allSettled(clients.map((c) => c.close()));
      await server.close();
      await api.mcp.runtime.close();
    },
  };
}

export interface SseFrame {
  id?: string;
  event: string;
  data: string;
}

/**
 * Read Server-Sent Events frames from a streaming response until `until` says stop or the
 * deadline passes; then cancel the body.
 */
export async function readSse(res: Response, until: (frames: SseFrame[]) => boolean, timeoutMs = 30_000): Promise<SseFrame[]> {
  const frames: SseFrame[] = [];
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  const deadline = Date.now() + timeoutMs;
  try {
    while (!until(frames) && Date.now() < deadline) {
      const next = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), Math.max(1, deadline - Date.now())))]);
      if (next === null || next.done) break;
      buffer += next.value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const frame: SseFrame = { event: 'message', data: '' };
        let isComment = true;
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue;
          isComment = false;
          const colon = line.indexOf(':');
          const field = line.slice(0, colon);
          const value = line.slice(colon + 1).replace(/^ /, '');
          if (field === 'id') frame.id = value;
          else if (field === 'event') frame.event = value;
          else if (field === 'data') frame.data += value;
        }
        if (!isComment) frames.push(frame);
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return frames;
}
