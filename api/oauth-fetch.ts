/**
 * How the OAuth resource server reaches its issuer (issue 24 O2, O6): one GET of a JSON document
 * with a deadline, a size cap and no redirects, connected to addresses checked beforehand (the
 * connection is pinned to them, so a name cannot resolve elsewhere between check and connect).
 *
 * The host policy of a `jwks_uri` learned from discovery: the issuer's own origin or a host
 * listed in MEMPALACE_OAUTH_JWKS_HOSTS; https unless issuer and keys are both on loopback; and
 * no loopback, link-local or private address unless the issuer itself is configured on one (an
 * internal or local issuer keeps its keys there too; a public one never points inward). The
 * issuer and an explicit MEMPALACE_OAUTH_JWKS_URL are the operator's choice and are fetched as
 * configured.
 */
import dns from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { LookupFunction } from 'node:net';
import { isNonPublicAddress } from '../palace/sources/sources.js';

/** Discovery metadata and key sets are a few KiB; anything far larger is not one. */
export const ISSUER_DOCUMENT_MAX_BYTES = 256 * 1024;

/** A host's addresses (an IP literal is its own). */
export type Resolve = (host: string) => Promise<string[]>;

export const systemResolve: Resolve = async (host) => {
  if (net.isIP(host)) return [host];
  return (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);
};

/** A fetch from the issuer that failed or was refused; `rule` says which check, `status` the HTTP answer. */
export class IssuerFetchError extends Error {
  constructor(message: string, readonly rule: string, readonly status?: number) {
    super(message);
    this.name = 'IssuerFetchError';
  }
}

function bareHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

/** `localhost` or a loopback address literal. */
export function isLoopbackHost(url: URL): boolean {
  const host = bareHost(url);
  if (host === 'localhost') return true;
  if (net.isIPv4(host)) return host.startsWith('127.');
  return host === '::1';
}

/** An issuer or explicit JWKS URL may use plain http only on loopback. */
export function httpsRequired(url: URL): boolean {
  return url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url));
}

async function addressesOf(url: URL, resolve: Resolve): Promise<string[]> {
  try {
    const addresses = await resolve(bareHost(url));
    if (addresses.length > 0) return addresses;
  } catch (e) {
    throw new IssuerFetchError(`${url.host} does not resolve (${(e as NodeJS.ErrnoException).code ?? String(e)})`, 'resolves');
  }
  throw new IssuerFetchError(`${url.host} does not resolve`, 'resolves');
}

/** Addresses of a configured URL (the issuer, an explicit JWKS URL): no policy beyond resolving. */
export async function configuredTarget(raw: string, resolve: Resolve = systemResolve): Promise<{ url: URL; addresses: string[] }> {
  const url = new URL(raw);
  return { url, addresses: await addressesOf(url, resolve) };
}

/** Check a discovered `jwks_uri` against the host policy; the addresses it may be fetched from. */
export async function checkJwksUrl(raw: string, policy: { issuer: string; jwksHosts: readonly string[] },
  resolve: Resolve = systemResolve): Promise<{ url: URL; addresses: string[] }> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new IssuerFetchError(`the issuer's jwks_uri '${raw}' is not a URL`, 'jwks_url');
  }
  const issuer = new URL(policy.issuer);
  const loopbackPair = url.protocol === 'http:' && isLoopbackHost(url) && isLoopbackHost(issuer);
  if (url.protocol !== 'https:' && !loopbackPair) throw new IssuerFetchError(`the issuer's jwks_uri '${url.href}' is not https`, 'jwks_https');
  const listed = policy.jwksHosts.some((h) => h.toLowerCase() === url.host.toLowerCase());
  if (url.origin !== issuer.origin && !listed) {
    throw new IssuerFetchError(
      `the issuer's jwks_uri '${url.href}' is not on the issuer's origin ${issuer.origin}; list its host in MEMPALACE_OAUTH_JWKS_HOSTS to allow it`,
      'jwks_origin',
    );
  }
  const addresses = await addressesOf(url, resolve);
  const inward = addresses.filter(isNonPublicAddress);
  if (inward.length > 0 && !(await addressesOf(issuer, resolve)).every(isNonPublicAddress)) {
    throw new IssuerFetchError(
      `the issuer's jwks_uri '${url.href}' resolves to a loopback, link-local or private address (${inward.join(', ')}) while the issuer is public`,
      'jwks_private_address',
    );
  }
  return { url, addresses };
}

/** GET `url` from one of `addresses` and parse its JSON: within `timeoutMs`, no redirect, at most ISSUER_DOCUMENT_MAX_BYTES. */
export function getJson(target: { url: URL; addresses: string[] }, timeoutMs: number): Promise<unknown> {
  const { url } = target;
  const checked = target.addresses.map((address) => ({ address, family: net.isIP(address) }));
  // Only the checked addresses are offered (all of them, so `localhost` works on either family).
  const lookup: LookupFunction = (_host, options, callback) => {
    if (options.all) callback(null, checked);
    else callback(null, checked[0]!.address, checked[0]!.family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(url, { method: 'GET', headers: { accept: 'application/json' }, lookup, signal: AbortSignal.timeout(timeoutMs) }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new IssuerFetchError(`${url.href} answered HTTP ${res.statusCode ?? '?'}`, 'status', res.statusCode));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > ISSUER_DOCUMENT_MAX_BYTES) req.destroy(new IssuerFetchError(`${url.href} sent more than ${ISSUER_DOCUMENT_MAX_BYTES} bytes`, 'max_bytes'));
        else chunks.push(chunk);
      });
      res.on('end', () => {
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch {
          reject(new IssuerFetchError(`${url.href} sent no JSON document`, 'json'));
        }
      });
      res.on('error', reject);
    });
    req.on('error', (e) => {
      reject(e instanceof IssuerFetchError ?
        e
        : e.name === 'AbortError' ?
        new IssuerFetchError(`no answer from ${url.origin} within ${timeoutMs} ms`, 'timeout')
        : new IssuerFetchError(`${url.origin}: ${(e as NodeJS.ErrnoException).code ?? e.message}`, 'connect'));
    });
    req.end();
  });
}
