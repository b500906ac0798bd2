/**
 * The scope table (core/scopes.ts) is the whole truth: every tool and every route has a row and
 * nothing else does; mempalace_reconnect needs admin; an admin reconnect drains the requests in
 * flight, so concurrent writes of other tokens all succeed (and a long event_wait returns); a
 * read-only server refuses every REST write with 403 `read_only`; a `replicate` token pulls the
 * log and nothing else (issue 24). The read-scope refusal of every mutating tool and route is
 * tests/e2e/api-readonly.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from '../../api/app.js';
import { createApp } from '../../api/app.js';
import { Authenticator, parseTokenEnv, parseTokenFileEntries } from '../../api/auth.js';
import type { Listening } from '../../api/server.js';
import { listen } from '../../api/server.js';
import type { Runtime } from '../../palace/runtime.js';
import { openRuntime } from '../../app/runtime.js';
import { loadConfig } from '../../app/config.js';
import { ROUTE_SCOPES, TOOL_SCOPES } from '../../core/scopes.js';
import { TOOLS } from '../../mcp/registry.js';
import { PalaceMcp } from '../../mcp/server.js';
import { API_TOKENS, startApi, tempDir } from './api-harness.js';
import type { ApiHarness } from './api-harness.js';
import { quietLogger } from '../helpers/log.js';

const tokensOf = (file: string, text: string) => parseTokenFileEntries(file, text).tokens;

interface RouteLayer {
  route?: { path: string; methods: Record<string, boolean> };
}

function routeKeys(api: Api): string[] {
  const keys: string[] = [];
  for (const layer of api.routes.stack as unknown as RouteLayer[]) {
    if (!layer.route) continue;
    for (const m of Object.keys(layer.route.methods)) keys.push(`${m.toUpperCase()} ${layer.route.path}`);
  }
  return keys;
}

describe('the scope table', () => {
  let h: ApiHarness;
  beforeAll(async () => {
    h = await startApi();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('has exactly one row per tool; writes need write, reconnect needs admin', () => {
    expect(Object.keys(TOOL_SCOPES).sort()).toEqual(TOOLS.map((t) => t.name).sort());
    for (const t of TOOLS) if (t.guards.readOnlyRefused || t.guards.mutating) expect(['write', 'admin'], t.name).toContain(TOOL_SCOPES[t.name]);
    expect(TOOL_SCOPES.mempalace_reconnect).toBe('admin');
  });

  it('has exactly one row per route of the app (plus /mcp)', () => {
    expect([...routeKeys(h.api), 'POST /mcp'].sort()).toEqual(Object.keys(ROUTE_SCOPES).sort());
  });

  it('reads token roots from the token file, canonical, and names a bad entry', () => {
    const dir = fs.realpathSync(tempDir('roots'));
    const [e] = tokensOf('tokens.json', JSON.stringify({ tokens: [{ token: 's', agent: 'a', scopes: ['write'], roots: [path.join(dir, '.', 'x', '..')] }] }));
    expect(e!.caller).toEqual({ identity: 'a', scopes: ['replicate', 'read', 'write'], roots: [dir] });
    for (const roots of [[], ['relative/dir'], 'not-a-list', [42]]) {
      expect(() => tokensOf('tokens.json', JSON.stringify({ tokens: [{ token: 's', agent: 'a', scopes: ['read'], roots }] }))).toThrow(
        expect.objectContaining({ field: 'roots', rule: 'absolute_paths' }),
      );
    }
  });
});

describe('the replicate scope', () => {
  let h: ApiHarness;
  beforeAll(async () => {
    h = await startApi({ auth: Authenticator.fromTokens([...API_TOKENS, ['tok-peer', { identity: 'peer', scopes: ['replicate'] }]]) });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('is accepted by the token file and MEMPALACE_API_TOKENS, and implied by read', () => {
    expect(tokensOf('tokens.yaml', 'tokens:\n  - { token: p, agent: peer, scopes: [replicate] }\n')[0]!.caller.scopes).toEqual(['replicate']);
    expect(parseTokenEnv('p=peer:replicate,r=reader:read').map((e) => e.caller.scopes)).toEqual([['replicate'], ['replicate', 'read']]);
    expect(() => parseTokenEnv('p=peer:replicator')).toThrow(expect.objectContaining({ field: 'scopes', rule: 'enum' }));
  });

  it('lets a peer pull the log, and nothing else: every other route, /mcp and every tool are refused', async () => {
    const alice = await h.mcpClient('tok-alice');
    await alice.callTool({ name: 'mempalace_event_append',
      arguments: { type: 'status.update', stream: 'project/x', room: 'status', from_agent: 'alice', body: 'hello' } });
    const vector = await h.call('/sync/version_vector', { token: 'tok-peer' });
    expect(vector.status).toBe(200);
    const { replica_id: origin } = (await vector.json()) as { replica_id: string };
    const opsPage = await h.call(`/sync/ops?origin=${origin}`, { token: 'tok-peer' });
    expect(opsPage.status).toBe(200);
    expect(((await opsPage.json()) as { events: { body: string; sig: string }[] }).events).toMatchObject([{ body: 'hello',
      sig: expect.stringMatching(/^[A-Za-z0-9_-]{86}$/) }]);
    expect((await h.call('/sync/artifact?id=art_none', { token: 'tok-peer' })).status).toBe(404);
    // Existing read tokens of peers keep working.
    expect((await h.call('/sync/version_vector', { token: 'tok-reader' })).status).toBe(200);

    const others = Object.entries(ROUTE_SCOPES).filter(([, scope]) => scope !== 'replicate' && scope !== 'open' && scope !== 'signed');
    for (const [key] of others) {
      const [method, route] = key.split(' ') as [string, string];
      const res = await h.call(route.replace(':id', 'x').replace(':queue', 'notifications'), { token: 'tok-peer', method,
        ...(method === 'GET' || method === 'DELETE' ? {} : { body: {} }) });
      expect(res.status, key).toBe(403);
    }
    // /mcp refuses the session outright, or (where it admits any valid token) every tool refuses the call.
    const peerClient = await h.mcpClient('tok-peer').catch((e: unknown) => e as Error);
    if (peerClient instanceof Error) expect(peerClient.message).toMatch(/403|scope/);
    else for (const name of Object.keys(TOOL_SCOPES))
        expect(JSON.stringify((await peerClient.callTool({ name, arguments: {} })).structuredContent), name).toMatch(/scope/);
  });
});

describe('read-only server', () => {
  let h: ApiHarness;
  beforeAll(async () => {
    h = await startApi({ env: { MEMPALACE_MCP_READ_ONLY: '1' } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('refuses every REST write with 403 read_only, even for admin, and still serves reads', async () => {
    const bodies: Record<string, unknown> = {
      'POST /v1/jobs/mine': { source: tempDir('ro-src') },
      'POST /v1/jobs/sync': { wing: 'x' },
      'POST /v1/jobs/delete_by_source': { source_file: '/x.md' },
      'POST /v1/jobs/:id/cancel': {},
      'POST /v1/sources': { location: tempDir('ro-registered') },
      'DELETE /v1/sources/:id': undefined,
      'POST /v1/sources/:id/refresh': {},
      'POST /v1/dead-letters/:queue/:id/retry': {},
      'POST /v1/hooks/git': { ref: 'refs/heads/main' },
      'POST /v1/revert': { agent: 'alice', dry_run: true },
    };
    // Every route that is not a GET and needs more than read: the audit trail (admin) is a GET, a read.
    const writes = Object.entries(ROUTE_SCOPES).filter(([k, s]) =>
      !k.startsWith('GET ') && s !== 'read' && s !== 'replicate' && s !== 'open' && k !== 'POST /mcp'
    ).map(([k]) => k);
    expect(writes.sort()).toEqual(Object.keys(bodies).sort());
    for (const key of writes) {
      const [method, route] = key.split(' ') as [string, string];
      const res = await h.call(route.replace(':id', 'some-job').replace(':queue', 'notifications'), { token: 'tok-admin', method,
        ...(bodies[key] === undefined ? {} : { body: bodies[key] }) });
      expect(res.status, key).toBe(403);
      expect(await res.json(), key).toMatchObject({ code: 'read_only', rule: 'read_only' });
    }
    expect((await h.runtime.jobs.list(10)).length).toBe(0);
    expect((await h.call('/v1/status', { token: 'tok-reader' })).status).toBe(200);
    expect((await h.call('/v1/search', { token: 'tok-reader', body: { query: 'anything' } })).status).toBe(200);
    expect((await h.call('/v1/audit', { token: 'tok-admin' })).status).toBe(200);
  });
});

describe('mempalace_reconnect', () => {
  let runtime: Runtime;
  let mcp: PalaceMcp;
  let server: Listening;
  const clients: Client[] = [];

  const client = async (token: string) => {
    const c = new McpClient({ name: 'scopes-e2e', version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    const config = loadConfig({ ...process.env, MEMPALACE_PALACE: tempDir('reconnect'), MEMPALACE_MCP_JOB_WAIT_S: '1' });
    runtime = await openRuntime(config);
    mcp = new PalaceMcp(runtime, { home: tempDir('home'), reopen: () => openRuntime(config), log: quietLogger() });
    const api = createApp(runtime, { mcp, auth: Authenticator.fromTokens(API_TOKENS), rateLimit: { ratePerSecond: 10_000, burst: 10_000 },
      log: quietLogger() });
    mcp.start();
    server = await listen(api.app, '127.0.0.1', 0);
  });
  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await server?.close();
    await mcp?.runtime.close();
  });

  it('is refused with a write token', async () => {
    const alice = await client('tok-alice');
    const result = await alice.callTool({ name: 'mempalace_reconnect', arguments: {} });
    expect(result.structuredContent).toEqual({ success: false, error: 'this token has no admin scope; mempalace_reconnect needs it' });
    expect(mcp.runtime).toBe(runtime);
  });

  it('with admin, drains in-flight requests: 60 concurrent writes and searches all succeed, a long wait returns', async () => {
    const alice = await client('tok-alice');
    const admin = await client('tok-admin');
    await alice.callTool({ name: 'mempalace_add_drawer',
      arguments: { wing: 'warm', room: 'general', content: 'warming the embedder before the race begins' } });
    const waiting = alice.callTool({ name: 'mempalace_event_wait', arguments: { stream: 'project/quiet', timeout_ms: 120_000 } }, undefined, {
      timeout: 150_000,
    });
    const writes = Array.from({ length: 60 }, (_, i) =>
      alice.callTool({
        name: 'mempalace_add_drawer',
        arguments: { wing: 'race', room: 'general', content: `concurrent note number ${i} about the tide tables and the berth ledger` },
      }));
    const searches = Array.from({ length: 5 },
      () =>
        fetch(`${server.url}/v1/search`, { method: 'POST', headers: { authorization: 'Bearer tok-alice', 'content-type': 'application/json' },
          body: JSON.stringify({ query: 'tide tables' }) }));
    const reconnect = admin.callTool({ name: 'mempalace_reconnect', arguments: {} }, undefined, { timeout: 150_000 });
    const [done, results, responses, waited] = await Promise.all([reconnect, Promise.all(writes), Promise.all(searches), waiting]);
    expect(done.structuredContent).toMatchObject({ success: true, message: 'Reconnected to palace' });
    expect(mcp.runtime).not.toBe(runtime);
    const failures = results.map((r) => r.structuredContent as { success?: boolean; error?: string }).filter((p) => p.success !== true);
    expect(failures).toEqual([]);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(waited.structuredContent).toMatchObject({ events: [] });
    expect((await mcp.runtime.stores.drawers.list({ wing: 'race' }, 0, 100)).total).toBe(60);
    expect(mcp.gate.inFlight).toBe(0);
  });
});
