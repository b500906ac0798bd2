/**
 * OAuth 2.1 resource server against a real OpenID provider (`oidc-provider`, started here on an
 * ephemeral port; client-credentials grant, RFC 8707 resource indicators, JWT access tokens):
 * a read-scoped token reads and cannot write; a write-scoped token writes as its own identity;
 * expired, wrong-audience and wrong-issuer tokens are refused; a 401 names the RFC 9728
 * metadata; static tokens keep working.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import Provider from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_TOKENS, startApi } from './api-harness.js';
import type { ApiHarness } from './api-harness.js';
import { Authenticator } from '../../api/auth.js';
import { OAuthResourceServer } from '../../api/oauth.js';
import { quietLogger } from '../helpers/log.js';

const RESOURCE = 'https://palace.test/mcp';
const ALL_SCOPES = 'mempalace:read mempalace:write mempalace:admin';

interface Issuer {
  url: string;
  token(clientId: string, scope: string, resource?: string): Promise<string>;
  close(): Promise<void>;
}

/** A real OpenID provider: clients `reader`, `writer` and `short` (1 s tokens), secret `s3cret`. */
async function startIssuer(): Promise<Issuer> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = (client_id: string) => ({ client_id, client_secret: 's3cret', grant_types: ['client_credentials'], redirect_uris: [], response_types: [], scope: ALL_SCOPES });
  const provider = new Provider(url, {
    clients: [client('reader'), client('writer'), client('short')],
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
  });
  server.on('request', provider.callback());
  return {
    url,
    async token(clientId, scope, resource = RESOURCE) {
      const res = await fetch(`${url}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${clientId}:s3cret`).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope, resource }).toString(),
      });
      const body = (await res.json()) as { access_token?: string; error?: string; error_description?: string };
      if (!body.access_token) throw new Error(`token request failed: ${res.status} ${body.error} ${body.error_description}`);
      return body.access_token;
    },
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

describe('OAuth resource server', () => {
  let issuer: Issuer;
  let other: Issuer;
  let api: ApiHarness;
  const clients: Client[] = [];

  beforeAll(async () => {
    issuer = await startIssuer();
    other = await startIssuer();
    const oauth = new OAuthResourceServer({ issuer: issuer.url, resource: RESOURCE, identityClaim: 'client_id', jwksUrl: undefined }, quietLogger());
    api = await startApi({ oauth, auth: Authenticator.fromTokens(API_TOKENS, oauth.verify) });
  });
  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await api?.close();
    await issuer?.close();
    await other?.close();
  });

  async function mcpClient(token: string): Promise<Client> {
    const client = new Client({ name: 'oauth-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    clients.push(client);
    return client;
  }

  const mcpPing = (token: string | null) => api.call('/mcp', {
    token, method: 'POST', rawBody: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
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
    const added = await client.callTool({ name: 'mempalace_add_drawer', arguments: { wing: 'oauth', room: 'notes', content: 'written with an OAuth access token' } });
    expect(added.isError).toBeUndefined();
    const drawerId = (added.structuredContent as { drawer_id: string }).drawer_id;
    const got = await client.callTool({ name: 'mempalace_get_drawer', arguments: { drawer_id: drawerId } });
    expect(JSON.stringify(got.structuredContent)).toContain('"added_by":"writer"');
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

  it('static tokens keep working beside OAuth', async () => {
    expect((await mcpPing('tok-admin')).status).toBe(200);
    expect((await api.call('/v1/status', { token: 'tok-reader' })).status).toBe(200);
  });
});
