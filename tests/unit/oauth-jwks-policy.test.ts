/**
 * The host policy of the issuer's `jwks_uri` (issue 24 O6): same origin as the issuer or a host
 * listed in MEMPALACE_OAUTH_JWKS_HOSTS; https unless the issuer is on loopback; never a
 * loopback, link-local or private address unless the issuer itself is on one. Names resolve
 * through the resolver given here, so public issuers can be checked without a network.
 */
import { describe, expect, it } from 'vitest';
import type { IssuerFetchError, Resolve } from '../../api/oauth-fetch.js';
import { checkJwksUrl } from '../../api/oauth-fetch.js';
import { OAuthResourceServer } from '../../api/oauth.js';
import { quietLogger } from '../helpers/log.js';

const DNS: Record<string, string[]> = {
  'idp.example.com': ['203.0.113.10'],
  'keys.example.net': ['198.51.100.7'],
  'rebound.example.com': ['127.0.0.1'],
  'idp.corp.internal': ['10.0.0.5'],
};
const resolve: Resolve = (host) => Promise.resolve(DNS[host] ?? [host]);

async function refusal(jwksUri: string, issuer: string, jwksHosts: string[] = []): Promise<string | undefined> {
  try {
    await checkJwksUrl(jwksUri, { issuer, jwksHosts }, resolve);
    return undefined;
  } catch (e) {
    return (e as IssuerFetchError).rule;
  }
}

describe('jwks_uri host policy', () => {
  it("allows the issuer's own origin and listed hosts, and pins the checked addresses", async () => {
    await expect(checkJwksUrl('https://idp.example.com/jwks', { issuer: 'https://idp.example.com', jwksHosts: [] }, resolve)).resolves.toMatchObject({
      addresses: ['203.0.113.10'],
    });
    expect(await refusal('https://keys.example.net/jwks', 'https://idp.example.com', ['keys.example.net'])).toBeUndefined();
    expect(await refusal('http://127.0.0.1:4000/jwks', 'http://127.0.0.1:4000')).toBeUndefined();
    expect(await refusal('https://idp.corp.internal/certs', 'https://idp.corp.internal')).toBeUndefined();
  });

  it('refuses other origins, plain http and non-public addresses of public issuers', async () => {
    expect(await refusal('https://keys.example.net/jwks', 'https://idp.example.com')).toBe('jwks_origin');
    expect(await refusal('https://idp.example.com:8443/jwks', 'https://idp.example.com')).toBe('jwks_origin');
    expect(await refusal('http://idp.example.com/jwks', 'https://idp.example.com')).toBe('jwks_https');
    expect(await refusal('https://rebound.example.com/jwks', 'https://idp.example.com', ['rebound.example.com'])).toBe('jwks_private_address');
    expect(await refusal('https://169.254.169.254/jwks', 'https://idp.example.com', ['169.254.169.254'])).toBe('jwks_private_address');
    expect(await refusal('http://127.0.0.1:4001/jwks', 'http://127.0.0.1:4000')).toBe('jwks_origin');
    expect(await refusal('file:///etc/passwd', 'https://idp.example.com')).toBe('jwks_https');
  });

  it('refuses an issuer or JWKS URL over plain http unless it is on loopback', () => {
    const server = (issuer: string, jwksUrl?: string) =>
      new OAuthResourceServer({ issuer, resource: 'https://palace.test/mcp', identityClaim: 'sub', jwksUrl, timeoutMs: 1000, jwksHosts: [],
        allowJwtTyp: false }, quietLogger());
    expect(() => server('http://idp.example.com')).toThrow(expect.objectContaining({ field: 'MEMPALACE_OAUTH_ISSUER', rule: 'https' }));
    expect(() => server('https://idp.example.com', 'http://idp.example.com/jwks')).toThrow(
      expect.objectContaining({ field: 'MEMPALACE_OAUTH_JWKS_URL', rule: 'https' }),
    );
    expect(() => server('http://127.0.0.1:4000')).not.toThrow();
    expect(() => server('http://localhost:4000')).not.toThrow();
  });
});
