/**
 * OAuth 2.1 resource server against a real OpenID provider (`oidc-provider`, started here on an
 * ephemeral port; client-credentials grant, RFC 8707 resource indicators, JWT access tokens):
 * a read-scoped token reads and cannot write; a write-scoped token writes as its own identity,
 * in the `oauth:<issuer>#<subject>` namespace (a subject named like a static agent is not that
 * agent, unless the token file maps it); expired, `exp`-less, wrongly typed, wrong-audience and
 * wrong-issuer tokens are refused; a 401 names the RFC 9728 metadata and a 403 the missing
 * scope; a resource URL without a path is compared as configured; static tokens keep working.
 * Issue 24 findings O1, O3, O4, O5 (O2 and O6: oauth-issuer-fetch.test.ts).
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import Provider from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_TOKENS, startApi, tempDir } from './api-harness.js';
import type { ApiHarness } from './api-harness.js';
import { createApp } from '../../api/app.js';
import type { ApiOptions } from '../../api/app.js';
import { Authenticator } from '../../api/auth.js';
import { OAuthResourceServer } from '../../api/oauth.js';
import type { Listening } from '../../api/server.js';
import { listen } from '../../api/server.js';
import type { OAuthSettings } from '../../core/config.js';
import { loadConfig } from '../../app/config.js';
import { quietLogger } from '../helpers/log.js';

const RESOURCE = 'https://palace.test/mcp';
const ALL_SCOPES = 'mempalace:replicate mempalace:read mempalace:write mempalace:admin';
/** A resource URL without a path (O5): compared exactly as configured, no trailing slash added. */
const BARE_RESOURCE = 'https://palace.test';

interface Issuer {
  url: string;
  token(clientId: string, scope: string, resource?: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * A real OpenID provider, secret `s3cret` for every client: `reader`, `writer`, `short` (1 s
 * tokens), `alice`, `ops`, `local` and `mapped` (subjects named like static agents), `noexp`
 * (its tokens carry no `exp`) and `plainjwt` (header `typ: JWT` instead of `at+jwt`).
 */
async function startIssuer(): Promise<Issuer> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = (client_id: string) => ({ client_id, client_secret: 's3cret', grant_types: ['client_credentials'], redirect_uris: [], response_types: [],
    scope: ALL_SCOPES });
  const provider = new Provider(url, {
    clients: ['reader', 'writer', 'short', 'alice', 'ops', 'local', 'mapped', 'noexp', 'plainjwt'].map(client),
    scopes: ALL_SCOPES.split(' '),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resourceIndicator, c) => ({
          scope: ALL_SCOPES,
          audience: resourceIndicator,
          accessTokenFormat: 'jwt',
          accessTokenTTL: c.clientId === 'short' ? 1 : 300,
        }),
      },
    },
    formats: {
      customizers: {
        jwt: (_ctx, token, jwt) => {
          if (token.clientId === 'noexp') delete jwt.payload.exp;
          if (token.clientId === 'plainjwt') jwt.header = { typ: 'JWT' };
        },
      },
    },
  });
  server.on('request', provider.callback());
  return {
    url,
    async token(clientId, scope, resource = RESOURCE) {
      const res = await fetch(`${url}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${clientId}:s3cret`).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}), resource }).toString(),
      });
      const body = (await res.json()) as { access_token?: string; error?: string; error_description?: string };
      if (!body.access_token) throw new Error(`token request failed: ${res.status} ${body.error} ${body.error_description}`);
      return body.access_token;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function settings(issuer: string, overrides: Partial<OAuthSettings> = {}): OAuthSettings {
  return { issuer, resource: RESOURCE, identityClaim: 'client_id', jwksUrl: undefined, timeoutMs: 2_000, jwksHosts: [], allowJwtTyp: false, ...overrides };
}

describe('OAuth resource server', () => {
  let issuer: Issuer;
  let other: Issuer;
  let api: ApiHarness;
  const clients: Client[] = [];
  const servers: Listening[] = [];

  beforeAll(async () => {
    issuer = await startIssuer();
    other = await startIssuer();
    const oauth = new OAuthResourceServer(settings(issuer.url), quietLogger());
    api = await startApi({ oauth, auth: Authenticator.fromTokens(API_TOKENS, oauth) });
  });
  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await Promise.allSettled(servers.map((s) => s.close()));
    await api?.close();
    await issuer?.close();
    await other?.close();
  });

  async function mcpClient(token: string, url = api.url): Promise<Client> {
    const client = new Client({ name: 'oauth-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    clients.push(client);
    return client;
  }

  /** Another app on the same palace, with its own OAuth settings and token table. */
  async function serveAlso(opts: ApiOptions): Promise<Listening> {
    const other = createApp(api.runtime, { mcp: api.api.mcp, rateLimit: { ratePerSecond: 1000, burst: 1000 }, log: quietLogger(), ...opts });
    const listening = await listen(other.app, '127.0.0.1', 0);
    servers.push(listening);
    return listening;
  }

  const identityOf = (clientId: string) => `oauth:${issuer.url}#${clientId}`;

  const mcpPing = (token: string | null) =>
    api.call('/mcp', {
      token,
      method: 'POST',
      rawBody: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    });

  it('serves RFC 9728 metadata and names it in every 401', async () => {
    for (const p of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const res = await api.call(p, { token: null });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ resource: RESOURCE, authorization_servers: [issuer.url], scopes_supported: ALL_SCOPES.split(' ') });
    }
    const expected = 'resource_metadata="https://palace.test/.well-known/oauth-protected-resource/mcp"';
    const mcp = await mcpPing(null);
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get('www-authenticate')).toContain(expected);
    expect(await mcp.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32001 } });
    const rest = await api.call('/v1/status', { token: null });
    expect(rest.status).toBe(401);
    expect(rest.headers.get('www-authenticate')).toContain(expected);
  });

  it('a read-scoped token reads and cannot write, over MCP and REST', async () => {
    const token = await issuer.token('reader', 'mempalace:read');
    expect((await api.call('/v1/status', { token })).status).toBe(200);
    const client = await mcpClient(token);
    const status = await client.callTool({ name: 'mempalace_status', arguments: {} });
    expect(status.isError).toBeUndefined();
    const write = await client.callTool({ name: 'mempalace_add_drawer', arguments: { wing: 'w', room: 'r', content: 'should not land' } });
    expect(write.isError).toBe(true);
    expect((write.structuredContent as { error: string }).error).toContain('no write scope');
    const rest = await api.call('/v1/jobs/mine', { token, body: { source: '/tmp' } });
    expect(rest.status).toBe(403);
    const wings = await client.callTool({ name: 'mempalace_list_wings', arguments: {} });
    expect((wings.structuredContent as { wings: Record<string, number> }).wings).toEqual({});
  });

  it('a write-scoped token writes under the identity claim', async () => {
    const client = await mcpClient(await issuer.token('writer', 'mempalace:write'));
    const added = await client.callTool({ name: 'mempalace_add_drawer',
      arguments: { wing: 'oauth', room: 'notes', content: 'written with an OAuth access token' } });
    expect(added.isError).toBeUndefined();
    const drawerId = (added.structuredContent as { drawer_id: string }).drawer_id;
    const got = await client.callTool({ name: 'mempalace_get_drawer', arguments: { drawer_id: drawerId } });
    expect(JSON.stringify(got.structuredContent)).toContain(`"added_by":${JSON.stringify(identityOf('writer'))}`);
    const forged = await client.callTool({ name: 'mempalace_add_drawer', arguments: { wing: 'oauth', room: 'notes', content: 'forged', added_by: 'reader' } });
    expect(forged.isError).toBe(true);
  });

  it('refuses expired, wrong-audience and wrong-issuer tokens', async () => {
    const wrongAudience = await issuer.token('writer', 'mempalace:write', 'https://elsewhere.test/mcp');
    const wrongIssuer = await other.token('writer', 'mempalace:write');
    const expiring = await issuer.token('short', 'mempalace:write');
    expect((await mcpPing(expiring)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 7_000));
    for (const token of [expiring, wrongAudience, wrongIssuer, 'not-a-token']) {
      const res = await mcpPing(token);
      expect(res.status).toBe(401);
      expect((await api.call('/v1/status', { token })).status).toBe(401);
    }
  });

  it('O1: a subject named alice, ops or local acts in the OAuth namespace, never as that static agent', async () => {
    for (const name of ['alice', 'ops', 'local']) {
      const client = await mcpClient(await issuer.token(name, 'mempalace:write'));
      const asStatic = await client.callTool({ name: 'mempalace_diary_write',
        arguments: { agent_name: name, entry: `written by an OAuth token whose subject is ${name}` } });
      expect(asStatic.isError, name).toBe(true);
      expect(JSON.stringify(asStatic.structuredContent), name).toContain(`this token's identity '${identityOf(name)}'`);
      const event = await client.callTool({ name: 'mempalace_event_append',
        arguments: { type: 'task.assign', stream: 'ops', room: 'delegation', from_agent: name, to_agent: 'bob', body: 'rotate the prod credentials' } });
      expect(event.isError, name).toBe(true);

      const own = await client.callTool({ name: 'mempalace_diary_write', arguments: { agent_name: identityOf(name), entry: `my own diary, subject ${name}` } });
      expect(own.isError, name).toBeUndefined();
      expect((own.structuredContent as { agent: string }).agent).toBe(identityOf(name));
      const appended = await client.callTool({ name: 'mempalace_event_append',
        arguments: { type: 'note', stream: 'ops', room: 'delegation', from_agent: identityOf(name), body: 'hello' } });
      expect(appended.isError, name).toBeUndefined();
    }
    const admin = await api.mcpClient('tok-admin');
    for (const name of ['alice', 'ops', 'local']) {
      const staticDiary = await admin.callTool({ name: 'mempalace_diary_read', arguments: { agent_name: name } });
      expect((staticDiary.structuredContent as { entries: unknown[] }).entries, name).toEqual([]);
      const oauthDiary = await admin.callTool({ name: 'mempalace_diary_read', arguments: { agent_name: identityOf(name) } });
      expect((oauthDiary.structuredContent as { entries: { content: string }[] }).entries.map((e) => e.content), name).toEqual([
        `my own diary, subject ${name}`,
      ]);
    }
    const events = await admin.callTool({ name: 'mempalace_event_list', arguments: { stream: 'ops' } });
    const senders = (events.structuredContent as { events: { from_agent: string }[] }).events.map((e) => e.from_agent);
    expect(senders).not.toContain('alice');
    expect(senders).toContain(identityOf('alice'));
  });

  it('O1: the token file maps an OAuth subject to an agent explicitly; static agents cannot take the oauth: namespace', async () => {
    const dir = tempDir('oauth-map');
    const file = path.join(dir, 'tokens.json');
    fs.writeFileSync(file, JSON.stringify({ tokens: [
      { token: 'tok-carol', agent: 'carol', scopes: ['read'] },
      { oauth_subject: `${issuer.url}#mapped`, agent: 'carol' },
    ] }));
    const config = loadConfig({ ...process.env, MEMPALACE_TOKENS_FILE: file, MEMPALACE_OAUTH_ISSUER: issuer.url, MEMPALACE_OAUTH_RESOURCE: RESOURCE });
    const oauth = new OAuthResourceServer(settings(issuer.url), quietLogger());
    const mappedServer = await serveAlso({ oauth, auth: Authenticator.fromConfig(config, oauth) });
    const mapped = await mcpClient(await issuer.token('mapped', 'mempalace:write'), mappedServer.url);
    const written = await mapped.callTool({ name: 'mempalace_diary_write', arguments: { agent_name: 'carol', entry: 'carol, through the mapping' } });
    expect(written.isError).toBeUndefined();
    const unmapped = await mcpClient(await issuer.token('writer', 'mempalace:write'), mappedServer.url);
    expect((await unmapped.callTool({ name: 'mempalace_diary_write', arguments: { agent_name: 'carol', entry: 'not carol' } })).isError).toBe(true);

    const refusedFile = path.join(dir, 'refused.json');
    fs.writeFileSync(refusedFile, JSON.stringify({ tokens: [{ token: 'tok-x', agent: `oauth:${issuer.url}#writer`, scopes: ['write'] }] }));
    const refused = loadConfig({ ...process.env, MEMPALACE_TOKENS_FILE: refusedFile });
    expect(() => Authenticator.fromConfig(refused)).toThrow(expect.objectContaining({ field: 'agent', rule: 'reserved_namespace' }));
    fs.writeFileSync(refusedFile, JSON.stringify({ tokens: [{ oauth_subject: 'https://elsewhere.test#mapped', agent: 'carol' }] }));
    expect(() => Authenticator.fromConfig(config, oauth)).not.toThrow();
    expect(() =>
      Authenticator.fromConfig(
        loadConfig({ ...process.env, MEMPALACE_TOKENS_FILE: refusedFile, MEMPALACE_OAUTH_ISSUER: issuer.url, MEMPALACE_OAUTH_RESOURCE: RESOURCE }),
        oauth,
      )
    )
      .toThrow(expect.objectContaining({ field: 'oauth_subject', rule: 'oauth_issuer' }));
  });

  it('O3: tokens without exp, and tokens typed JWT rather than at+jwt, are refused', async () => {
    const noExp = await issuer.token('noexp', 'mempalace:write');
    const plain = await issuer.token('plainjwt', 'mempalace:write');
    expect(JSON.parse(Buffer.from(noExp.split('.')[1]!, 'base64url').toString())).not.toHaveProperty('exp');
    expect(JSON.parse(Buffer.from(plain.split('.')[0]!, 'base64url').toString())).toMatchObject({ typ: 'JWT' });
    for (const token of [noExp, plain]) {
      expect((await mcpPing(token)).status).toBe(401);
      expect((await api.call('/v1/status', { token })).status).toBe(401);
    }
    expect((await mcpPing(await issuer.token('writer', 'mempalace:write'))).status).toBe(200);

    const lenient = new OAuthResourceServer(settings(issuer.url, { allowJwtTyp: true }), quietLogger());
    const lenientServer = await serveAlso({ oauth: lenient, auth: Authenticator.fromTokens(API_TOKENS, lenient) });
    expect((await fetch(`${lenientServer.url}/v1/status`, { headers: { authorization: `Bearer ${plain}` } })).status).toBe(200);
    expect((await fetch(`${lenientServer.url}/v1/status`, { headers: { authorization: `Bearer ${noExp}` } })).status).toBe(401);
  });

  it('O4: a 403 for a missing scope carries an insufficient_scope challenge, on REST and /mcp', async () => {
    const metadata = 'resource_metadata="https://palace.test/.well-known/oauth-protected-resource/mcp"';
    const reader = await issuer.token('reader', 'mempalace:read');
    const rest = await api.call('/v1/jobs/mine', { token: reader, body: { source: '/tmp' } });
    expect(rest.status).toBe(403);
    const restChallenge = rest.headers.get('www-authenticate') ?? '';
    expect(restChallenge).toMatch(/^Bearer /);
    expect(restChallenge).toContain('error="insufficient_scope"');
    expect(restChallenge).toContain('scope="mempalace:write"');
    expect(restChallenge).toContain(metadata);

    const scopeless = await issuer.token('reader', '');
    const mcp = await mcpPing(scopeless);
    expect(mcp.status).toBe(403);
    const mcpChallenge = mcp.headers.get('www-authenticate') ?? '';
    expect(mcpChallenge).toContain('error="insufficient_scope"');
    expect(mcpChallenge).toContain('scope="mempalace:read"');
    expect(mcpChallenge).toContain(metadata);
    expect(await mcp.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });

    const staticRest = await api.call('/v1/jobs/mine', { token: 'tok-reader', body: { source: '/tmp' } });
    expect(staticRest.status).toBe(403);
    expect(staticRest.headers.get('www-authenticate')).toContain('error="insufficient_scope", scope="mempalace:write"');
  });

  it('O5: a resource URL without a path matches the audience exactly as configured', async () => {
    const bare = new OAuthResourceServer(settings(issuer.url, { resource: BARE_RESOURCE }), quietLogger());
    const bareServer = await serveAlso({ oauth: bare, auth: Authenticator.fromTokens(API_TOKENS, bare) });
    const token = await issuer.token('writer', 'mempalace:read', BARE_RESOURCE);
    expect(JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString())).toMatchObject({ aud: BARE_RESOURCE });
    expect((await fetch(`${bareServer.url}/v1/status`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    const slashed = await issuer.token('writer', 'mempalace:read', `${BARE_RESOURCE}/`);
    expect((await fetch(`${bareServer.url}/v1/status`, { headers: { authorization: `Bearer ${slashed}` } })).status).toBe(401);
    const meta = await fetch(`${bareServer.url}/.well-known/oauth-protected-resource`);
    expect(await meta.json()).toMatchObject({ resource: BARE_RESOURCE });
    const unauthenticated = await fetch(`${bareServer.url}/v1/status`);
    expect(unauthenticated.headers.get('www-authenticate')).toContain('resource_metadata="https://palace.test/.well-known/oauth-protected-resource"');
  });

  it('static tokens keep working beside OAuth', async () => {
    expect((await mcpPing('tok-admin')).status).toBe(200);
    expect((await api.call('/v1/status', { token: 'tok-reader' })).status).toBe(200);
  });
});
