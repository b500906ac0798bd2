/**
 * What the OAuth resource server fetches from its issuer, against hostile issuers (tiny HTTP
 * servers here: the adversary, not a fake engine). Issue 24 findings O2 and O6:
 *
 * - tokens that are not JWTs, or name another issuer, cause no fetch at all;
 * - a hung issuer is given a short deadline, answered 503 `store_unavailable` (retryable), and
 *   asked again only after a bounded retry interval, however many tokens arrive meanwhile;
 * - requests over the rate limit are refused before any verification starts;
 * - a `jwks_uri` on another origin (or on a loopback/private address for a public issuer) is
 *   never fetched unless its host is allowed explicitly.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_TOKENS, startApi } from './api-harness.js';
import type { ApiHarness } from './api-harness.js';
import { createApp } from '../../api/app.js';
import type { ApiOptions } from '../../api/app.js';
import { Authenticator } from '../../api/auth.js';
import { OAuthResourceServer } from '../../api/oauth.js';
import type { Listening } from '../../api/server.js';
import { listen } from '../../api/server.js';
import type { OAuthSettings } from '../../core/config.js';
import { quietLogger } from '../helpers/log.js';

const RESOURCE = 'https://palace.test/mcp';
const TIMEOUT_MS = 1_000;

interface HostileServer {
  url: string;
  /** Paths requested so far, in order. */
  hits: string[];
  close(): Promise<void>;
}

/** An HTTP server that records every request and answers with `answer` (or never, when it returns undefined). */
async function hostile(answer: (path: string, base: string) => { status: number; body: unknown } | undefined): Promise<HostileServer> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    const reply = answer(req.url ?? '', url);
    if (!reply) return;
    res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A JWT that passes every check but its signature: what anyone can mint for a known issuer. */
function forged(iss: string, i: number): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'RS256', typ: 'at+jwt', kid: `kid-${i}` })}.${
    part({ iss, aud: RESOURCE, sub: `sub-${i}`, exp: Math.floor(Date.now() / 1000) + 300, scope: 'mempalace:read' })
  }.${Buffer.from(`sig-${i}`).toString('base64url')}`;
}

function settings(issuer: string, overrides: Partial<OAuthSettings> = {}): OAuthSettings {
  return { issuer, resource: RESOURCE, identityClaim: 'sub', jwksUrl: undefined, timeoutMs: TIMEOUT_MS, jwksHosts: [], allowJwtTyp: false, ...overrides };
}

interface Answer {
  status: number;
  ms: number;
  body: { code?: string; retryable?: boolean; error?: string };
}

async function status(url: string, token: string): Promise<Answer> {
  const started = Date.now();
  try {
    const res = await fetch(`${url}/v1/status`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(5_000) });
    return { status: res.status, ms: Date.now() - started, body: (await res.json()) as Answer['body'] };
  } catch {
    return { status: 0, ms: Date.now() - started, body: {} };
  }
}

describe('OAuth issuer fetches', () => {
  let h: ApiHarness;
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    h = await startApi();
  });
  afterAll(async () => {
    await Promise.allSettled(closers.map((c) => c()));
    await h?.close();
  });

  async function issuerServer(answer: Parameters<typeof hostile>[0]): Promise<HostileServer> {
    const s = await hostile(answer);
    closers.push(s.close);
    return s;
  }

  /** An app on the shared palace whose OAuth resource server trusts `issuer`. */
  async function serve(oauthSettings: OAuthSettings, opts: ApiOptions = {}): Promise<Listening> {
    const oauth = new OAuthResourceServer(oauthSettings, quietLogger());
    const app = createApp(h.runtime, { mcp: h.api.mcp, oauth, auth: Authenticator.fromTokens(API_TOKENS, oauth),
      rateLimit: { ratePerSecond: 1000, burst: 1000 }, log: quietLogger(), ...opts });
    const listening = await listen(app.app, '127.0.0.1', 0);
    closers.push(listening.close);
    return listening;
  }

  it('O2: tokens that are not JWTs or name another issuer cause no fetch', async () => {
    const issuer = await issuerServer(() => ({ status: 500, body: {} }));
    const server = await serve(settings(issuer.url));
    const tokens = [
      ...Array.from({ length: 25 }, (_, i) => `not-a-jwt-${i}`),
      ...Array.from({ length: 25 }, (_, i) => forged('https://elsewhere.test', i)),
    ];
    for (const token of tokens) expect((await status(server.url, token)).status).toBe(401);
    expect(issuer.hits).toEqual([]);
  });

  it('O2: a hung issuer gets a short deadline, a retryable 503, and one fetch per retry interval', async () => {
    const issuer = await issuerServer(() => undefined);
    const server = await serve(settings(issuer.url));
    const started = Date.now();
    const first = await Promise.all(Array.from({ length: 25 }, (_, i) => status(server.url, forged(issuer.url, i))));
    const second = await Promise.all(Array.from({ length: 25 }, (_, i) => status(server.url, forged(issuer.url, 100 + i))));
    const elapsed = Date.now() - started;
    for (const a of [...first, ...second]) {
      expect(a.status).toBe(503);
      expect(a.body).toMatchObject({ code: 'store_unavailable', retryable: true });
    }
    expect(Math.max(...first.map((a) => a.ms))).toBeLessThan(TIMEOUT_MS + 1_000);
    expect(Math.max(...second.map((a) => a.ms))).toBeLessThan(500);
    expect(elapsed).toBeLessThan(TIMEOUT_MS + 1_500);
    expect(issuer.hits).toEqual(['/.well-known/openid-configuration']);
    const retryAfter = (await fetch(`${server.url}/v1/status`, { headers: { authorization: `Bearer ${forged(issuer.url, 999)}` } })).headers.get('retry-after');
    expect(Number(retryAfter)).toBeGreaterThan(0);
  });

  it('O2: requests over the rate limit are refused before any verification starts', async () => {
    const issuer = await issuerServer(() => undefined);
    const server = await serve(settings(issuer.url, { timeoutMs: 2_000 }), { rateLimit: { ratePerSecond: 1, burst: 5 } });
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => status(server.url, forged(issuer.url, i))));
    const limited = answers.filter((a) => a.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(15);
    // Refused at once, not after the 2 s the issuer fetch waits for.
    expect(Math.max(...limited.map((a) => a.ms))).toBeLessThan(1_000);
    expect(issuer.hits.length).toBeLessThanOrEqual(1);
  });

  it('O6: a jwks_uri on another origin is never fetched unless its host is allowed', async () => {
    const keys = await issuerServer(() => ({ status: 200, body: { keys: [] } }));
    for (const jwksUri of [`${keys.url}/jwks`, 'http://169.254.169.254/latest/meta-data/jwks']) {
      const issuer = await issuerServer((p,
        base) => (p === '/.well-known/openid-configuration' ? { status: 200, body: { issuer: base, jwks_uri: jwksUri } } : { status: 404, body: {} })
      );
      const server = await serve(settings(issuer.url));
      const answer = await status(server.url, forged(issuer.url, 1));
      expect(answer.status).toBe(503);
      expect(answer.body.error).toContain('jwks_uri');
    }
    expect(keys.hits).toEqual([]);

    const issuer = await issuerServer((p,
      base) => (p === '/.well-known/openid-configuration' ? { status: 200, body: { issuer: base, jwks_uri: `${keys.url}/jwks` } } : { status: 404, body: {} })
    );
    const allowed = await serve(settings(issuer.url, { jwksHosts: [new URL(keys.url).host] }));
    // The keys are fetched now; the forged token is then refused for its signature.
    expect((await status(allowed.url, forged(issuer.url, 1))).status).toBe(401);
    expect(keys.hits).toEqual(['/jwks']);
  });
});
