/**
 * Shared setup of the MCP e2e tests: a temporary palace, the real runtime (SQLite stores, MiniLM
 * embedder, local job engine) and an SDK client over stdio (a spawned server process) or over
 * Streamable HTTP (an Express app with the /mcp router on an ephemeral port).
 */
import fs from 'node:fs';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { Ajv } from 'ajv';
import express from 'express';
import { expect } from 'vitest';
import { createJobActivities } from '../../jobs/activities.js';
import { openRuntime } from '../../app/runtime.js';
import { createJobWorker } from '../../jobs/engines/temporal/worker.js';
import type { Runtime } from '../../palace/runtime.js';
import { loadConfig } from '../../app/config.js';
import { bearerTokenResolver, mcpRouter } from '../../mcp/http.js';
import type { PalaceMcpOptions } from '../../mcp/server.js';
import { PalaceMcp } from '../../mcp/server.js';
import type { Caller } from '../../core/caller.js';
import { errorsOnlyLogger } from '../helpers/log.js';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');

/**
 * The cluster profile runs jobs as Temporal workflows on `mempalace worker` processes; the e2e
 * runs start one worker in the test process over its own runtime for the same palace (its own
 * connections to the shared engines), as a deployment would.
 */
export async function startClusterWorker(env: Record<string, string>): Promise<{ stop(): Promise<void> }> {
  const config = loadConfig({ ...process.env, MEMPALACE_PALACE: tempDir('worker'), ...env });
  const runtime = await openRuntime(config);
  const activities = createJobActivities({ config, stores: runtime.stores, embedder: runtime.embedder, workspace: path.join(config.palaceDir, 'workspace') });
  const worker = await createJobWorker({ temporal: config.temporal, activities, locks: runtime.stores.locks, jobs: runtime.stores.jobs,
    leaseMs: config.jobLeaseMs });
  const running = worker.run();
  return {
    async stop() {
      worker.shutdown();
      await running;
      await runtime.close();
    },
  };
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `mempalace-mcp-${prefix}-`));
}

export const TOKENS = new Map<string, Caller>([
  ['tok-alice', { identity: 'alice', scopes: ['read', 'write'] }],
  ['tok-bob', { identity: 'bob', scopes: ['read', 'write'] }],
  ['tok-admin', { identity: 'ops', scopes: ['read', 'write', 'admin'] }],
  ['tok-reader', { identity: 'reader', scopes: ['read'] }],
]);

export interface Harness {
  kind: 'stdio' | 'http';
  palaceDir: string;
  home: string;
  client: Client;
  /** Another client (HTTP: with another token). */
  connect(token?: string): Promise<Client>;
  mcp?: PalaceMcp;
  runtime?: Runtime;
  url?: string;
  close(): Promise<void>;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  server?: PalaceMcpOptions;
  token?: string;
}

const clients: Client[] = [];

async function newClient(transport: StdioClientTransport | StreamableHTTPClientTransport): Promise<Client> {
  const client = new Client({ name: 'mempalace-e2e', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

export async function startHttp(opts: HarnessOptions = {}): Promise<Harness> {
  const palaceDir = tempDir('palace');
  const home = tempDir('home');
  const config = loadConfig({ ...process.env, MEMPALACE_PALACE: palaceDir, MEMPALACE_MCP_JOB_WAIT_S: '120', ...opts.env });
  const runtime = await openRuntime(config);
  const mcp = new PalaceMcp(runtime, { home, log: errorsOnlyLogger(), ...opts.server });
  mcp.start();
  const app = express();
  app.use(mcpRouter(mcp, { resolveCaller: bearerTokenResolver(TOKENS) }));
  const server = await new Promise<HttpServer>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  const connect = (token = opts.token ?? 'tok-admin') =>
    newClient(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  const client = await connect();
  return {
    kind: 'http',
    palaceDir,
    home,
    client,
    connect,
    mcp,
    runtime: mcp.runtime,
    url,
    async close() {
      await Promise.allSettled(clients.splice(0).map((c) => c.close()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await mcp.close();
    },
  };
}

export async function startStdio(opts: HarnessOptions = {}): Promise<Harness> {
  const palaceDir = tempDir('palace');
  const home = tempDir('home');
  const env = { ...process.env, MEMPALACE_PALACE: palaceDir, MEMPALACE_TEST_HOME: home, MEMPALACE_MCP_JOB_WAIT_S: '120', ...opts.env } as Record<string,
    string>;
  const connect = () =>
    newClient(new StdioClientTransport({
      command: process.execPath,
      args: [path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), path.join(ROOT, 'tests', 'fixtures', 'mcp-stdio-server.ts')],
      env,
      cwd: ROOT,
      stderr: 'ignore',
    }));
  const client = await connect();
  return {
    kind: 'stdio',
    palaceDir,
    home,
    client,
    connect,
    async close() {
      await Promise.allSettled(clients.splice(0).map((c) => c.close()));
    },
  };
}

const ajv = new Ajv({ strict: false, allowUnionTypes: true });
const validators = new Map<string, ReturnType<typeof ajv.compile>>();

/** Remember every tool's outputSchema from tools/list, to validate results with ajv. */
export async function learnSchemas(client: Client): Promise<void> {
  for (const t of (await client.listTools()).tools) if (t.outputSchema && !validators.has(t.name)) validators.set(t.name, ajv.compile(t.outputSchema));
}

/** Call a tool; check text == structuredContent and structuredContent against its outputSchema. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {},
  options: { onprogress?: (p: Progress) => void; signal?: AbortSignal } = {}): Promise<Record<string, unknown>> {
  const res = (await client.callTool({ name, arguments: args }, CallToolResultSchema, { timeout: 300_000, ...options })) as CallToolResult;
  const first = res.content[0];
  if (first?.type !== 'text') throw new Error(`no text content from ${name}`);
  const parsed: unknown = JSON.parse(first.text);
  const sc = res.structuredContent as Record<string, unknown>;
  expect(sc).toEqual(Array.isArray(parsed) ? { items: parsed } : parsed);
  // A tool-level error (a string `error`) is flagged isError; nothing else is.
  expect(res.isError ?? false).toBe(typeof sc.error === 'string');
  const validate = validators.get(name);
  if (!validate) throw new Error(`no output schema learned for ${name}`);
  if (!validate(sc)) throw new Error(`${name} result does not match its outputSchema: ${ajv.errorsText(validate.errors)}\n${first.text.slice(0, 500)}`);
  return sc;
}

export async function items(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>[]> {
  const sc = await call(client, name, args);
  expect(sc.error).toBeUndefined();
  return sc.items as Record<string, unknown>[];
}

/** Call a tool expecting a JSON-RPC error with this code; returns the error. */
export async function rpcError(client: Client, name: string, args: unknown, code: number): Promise<McpError> {
  try {
    await client.callTool({ name, arguments: args as Record<string, unknown> }, CallToolResultSchema, { timeout: 60_000 });
  } catch (e) {
    expect(e).toBeInstanceOf(McpError);
    expect((e as McpError).code).toBe(code);
    return e as McpError;
  }
  throw new Error(`${name} did not fail with ${code}`);
}

/** Counts of everything a tool can write, read through the tools themselves. */
export async function snapshot(client: Client): Promise<Record<string, number>> {
  const status = await call(client, 'mempalace_status');
  const kg = await call(client, 'mempalace_kg_stats');
  const tunnels = await items(client, 'mempalace_list_tunnels');
  const hallways = await items(client, 'mempalace_list_hallways');
  const events = await call(client, 'mempalace_event_list', { limit: 500 });
  return { drawers: status.total_drawers as number, triples: kg.triples as number, tunnels: tunnels.length, hallways: hallways.length,
    events: events.count as number };
}

/** A small project to mine: a few documents in two folders. */
export function makeProject(files = 6): string {
  const dir = tempDir('project');
  fs.mkdirSync(path.join(dir, 'docs'));
  fs.mkdirSync(path.join(dir, 'src'));
  for (let i = 0; i < files; i++) {
    fs.writeFileSync(path.join(dir, i % 2 ? 'docs' : 'src', `note-${i}.md`),
      `# Note ${i}\n\nThe lighthouse keeper logged storm number ${i} near the harbour.\nTides rose ${i * 3} centimetres above the pier.\n`);
  }
  return dir;
}
