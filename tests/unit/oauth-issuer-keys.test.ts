/**
 * The failure cache of the issuer's keys (issue 24 O2), on a clock the test moves: a failing
 * issuer is asked again only after 5 s, then 10 s, 20 s … up to 60 s; keys fetched before keep
 * serving while a refresh fails; a `kid` the key set lacks is looked up at most every 30 s.
 * The issuer is a local HTTP server whose answers the test switches.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPair, exportJWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IssuerKeys, KEYS_MAX_AGE_MS, RETRY_FIRST_MS, RETRY_MAX_MS, UNKNOWN_KID_COOLDOWN_MS } from '../../api/oauth-keys.js';
import type { PalaceError } from '../../core/errors.js';
import { quietLogger } from '../helpers/log.js';

describe('issuer keys', () => {
  let server: http.Server;
  let url: string;
  let healthy = false;
  let jwks: unknown;
  const hits: string[] = [];

  beforeAll(async () => {
    const { publicKey } = await generateKeyPair('ES256');
    jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] };
    server = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      if (!healthy) return void res.writeHead(500).end();
      const body = req.url === '/.well-known/openid-configuration' ? { issuer: url, jwks_uri: `${url}/jwks` } : jwks;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('retries a failing issuer after a doubling, bounded interval and keeps old keys meanwhile', async () => {
    let now = 1_000_000;
    const keys = new IssuerKeys({ issuer: url, jwksUrl: undefined, jwksHosts: [], timeoutMs: 1_000 }, quietLogger(), undefined, () => now);
    const attempt = async () => {
      try {
        await keys.keysFor('k1');
        return 'keys';
      } catch (e) {
        return (e as PalaceError).code;
      }
    };

    healthy = false;
    expect(await attempt()).toBe('store_unavailable');
    expect(hits).toHaveLength(1);
    for (let i = 0; i < 20; i++) expect(await attempt()).toBe('store_unavailable');
    expect(hits).toHaveLength(1);

    const intervals: number[] = [];
    let waited = 0;
    while (intervals.length < 6) {
      now += 1_000;
      waited += 1_000;
      const before = hits.length;
      await attempt();
      if (hits.length > before) {
        intervals.push(waited);
        waited = 0;
      }
    }
    expect(intervals).toEqual([RETRY_FIRST_MS, 2 * RETRY_FIRST_MS, 4 * RETRY_FIRST_MS, 8 * RETRY_FIRST_MS, RETRY_MAX_MS, RETRY_MAX_MS]);

    healthy = true;
    now += RETRY_MAX_MS;
    expect(await attempt()).toBe('keys');
    const fetched = hits.length;

    // A kid the set lacks: one refetch per cooldown, however many tokens name it.
    now += UNKNOWN_KID_COOLDOWN_MS + 1;
    for (let i = 0; i < 20; i++) await keys.keysFor(`made-up-${i}`);
    expect(hits.length).toBe(fetched + 1);

    // Stale keys whose refresh fails keep serving.
    healthy = false;
    now += KEYS_MAX_AGE_MS + 1;
    expect(await attempt()).toBe('keys');
    expect(hits.length).toBe(fetched + 2);
  });
});
