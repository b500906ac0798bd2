/**
 * The issuer's signing keys (issue 24 O2): found through discovery (or MEMPALACE_OAUTH_JWKS_URL),
 * fetched by api/oauth-fetch.ts with its deadline and host policy, one fetch at a time.
 *
 * - Keys are refetched when older than KEYS_MAX_AGE_MS, or for a `kid` they lack at most once per
 *   UNKNOWN_KID_COOLDOWN_MS, so tokens naming made-up keys cannot make the server fetch per request.
 * - A failed fetch is remembered: no new fetch until its retry time, which starts at
 *   RETRY_FIRST_MS and doubles per consecutive failure up to RETRY_MAX_MS. Meanwhile the keys
 *   fetched before keep serving; with none, callers get a retryable `store_unavailable` at once.
 */
import { createLocalJWKSet } from 'jose';
import type { JSONWebKeySet, JWTVerifyGetKey } from 'jose';
import { PalaceError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { Resolve } from './oauth-fetch.js';
import { IssuerFetchError, checkJwksUrl, configuredTarget, getJson, systemResolve } from './oauth-fetch.js';

export const KEYS_MAX_AGE_MS = 10 * 60_000;
export const UNKNOWN_KID_COOLDOWN_MS = 30_000;
export const RETRY_FIRST_MS = 5_000;
export const RETRY_MAX_MS = 60_000;

/** The store name of the issuer in `store_unavailable` errors and metrics. */
export const ISSUER_STORE = 'oauth_issuer';

export interface IssuerKeysOptions {
  issuer: string;
  jwksUrl: string | undefined;
  jwksHosts: readonly string[];
  timeoutMs: number;
}

interface KeySet {
  get: JWTVerifyGetKey;
  kids: Set<string>;
  fetchedAt: number;
}

const DISCOVERY = ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server'];

export class IssuerKeys {
  private keys: KeySet | undefined;
  private jwksTarget: { url: URL; addresses: string[] } | undefined;
  private failure: { until: number; reason: string; streak: number } | undefined;
  private pending: Promise<void> | undefined;

  constructor(
    private readonly opts: IssuerKeysOptions,
    private readonly log: Logger,
    private readonly resolve: Resolve = systemResolve,
    private readonly now: () => number = Date.now,
  ) {}

  /** The key set to verify a token signed with `kid`; throws `store_unavailable` when there is none to use. */
  async keysFor(kid: string | undefined): Promise<JWTVerifyGetKey> {
    const now = this.now();
    const due = !this.keys
      || now - this.keys.fetchedAt > KEYS_MAX_AGE_MS
      || (kid !== undefined && !this.keys.kids.has(kid) && now - this.keys.fetchedAt > UNKNOWN_KID_COOLDOWN_MS);
    if (due && !(this.failure && now < this.failure.until)) await this.refresh();
    if (this.keys) return this.keys.get;
    const retryAfterS = Math.max(1, Math.ceil(((this.failure?.until ?? now) - this.now()) / 1000));
    throw new PalaceError('store_unavailable',
      `the OAuth issuer ${this.opts.issuer} is unavailable: ${this.failure?.reason ?? 'no keys'}; retry in ${retryAfterS} s`, {
      store: ISSUER_STORE,
      retryable: true,
      details: { retry_after_s: retryAfterS },
    });
  }

  private refresh(): Promise<void> {
    this.pending ??= this.fetchKeys().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private async fetchKeys(): Promise<void> {
    try {
      this.jwksTarget ??= await this.locateJwks();
      const doc = (await getJson(this.jwksTarget, this.opts.timeoutMs)) as Partial<JSONWebKeySet> | null;
      if (!doc || !Array.isArray(doc.keys)) throw new IssuerFetchError(`${this.jwksTarget.url.href} is not a JWK set`, 'jwks_document');
      const set = doc as JSONWebKeySet;
      this.keys = { get: createLocalJWKSet(set), kids: new Set(set.keys.map((k) => k.kid).filter((k): k is string => typeof k === 'string')),
        fetchedAt: this.now() };
      this.failure = undefined;
    } catch (e) {
      const streak = (this.failure?.streak ?? 0) + 1;
      const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (streak - 1));
      const reason = e instanceof Error ? e.message : String(e);
      this.failure = { until: this.now() + delay, reason, streak };
      this.log.warn(`mempalace api: OAuth keys of ${this.opts.issuer} not fetched (${reason}); next attempt in ${delay / 1000} s`);
    }
  }

  /** Where the keys are: the configured JWKS URL, else the issuer's discovery metadata under the host policy. */
  private async locateJwks(): Promise<{ url: URL; addresses: string[] }> {
    if (this.opts.jwksUrl) return configuredTarget(this.opts.jwksUrl, this.resolve);
    const base = this.opts.issuer.replace(/\/$/, '');
    for (const wellKnown of DISCOVERY) {
      let meta: { jwks_uri?: unknown; issuer?: unknown } | null;
      try {
        meta = (await getJson(await configuredTarget(`${base}${wellKnown}`, this.resolve), this.opts.timeoutMs)) as typeof meta;
      } catch (e) {
        // Only a missing document sends us to the other well-known name; a hung issuer is asked once.
        if (e instanceof IssuerFetchError && e.status === 404) continue;
        throw e;
      }
      if (meta?.issuer !== undefined && meta.issuer !== this.opts.issuer) {
        throw new IssuerFetchError(`the discovery metadata names issuer '${String(meta.issuer)}', not '${this.opts.issuer}'`, 'issuer_mismatch');
      }
      if (typeof meta?.jwks_uri !== 'string') throw new IssuerFetchError(`the issuer's discovery metadata names no jwks_uri`, 'jwks_uri');
      return checkJwksUrl(meta.jwks_uri, { issuer: this.opts.issuer, jwksHosts: this.opts.jwksHosts }, this.resolve);
    }
    throw new IssuerFetchError(`the issuer ${this.opts.issuer} publishes no discovery metadata`, 'discovery');
  }
}
