/**
 * OAuth 2.1 resource server per the MCP authorization spec: with `MEMPALACE_OAUTH_ISSUER` set,
 * `/mcp` and `/v1` accept JWT access tokens (RFC 9068) from that issuer besides the static tokens.
 *
 * - Keys: the issuer's JWKS (from `MEMPALACE_OAUTH_JWKS_URL`, else its discovery metadata),
 *   fetched and cached by `jose` (refetched on an unknown `kid`, with a cooldown).
 * - Checks: signature, `iss`, `aud` = this server's resource URL (`MEMPALACE_OAUTH_RESOURCE`),
 *   `exp`/`nbf` with a 5 s clock tolerance.
 * - Scopes `mempalace:read`, `mempalace:write`, `mempalace:admin` (in `scope` or `scp`) map to
 *   the static tokens' read/write/admin, with the same implications; the agent identity is the
 *   claim named by `MEMPALACE_OAUTH_IDENTITY_CLAIM` (default `sub`).
 * - Discovery: RFC 9728 protected-resource metadata, and a 401 challenge naming it.
 */
import { createHash } from 'node:crypto';
import type { RequestHandler } from 'express';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify } from 'jose';
import type { JWTPayload } from 'jose';
import type { Config, OAuthSettings } from '../core/config.js';
import type { Logger } from '../core/log.js';
import { invalidArgument } from '../core/errors.js';
import type { Principal, Scope, TokenVerifier } from './auth.js';
import { SCOPES, impliedScopes } from './auth.js';

export const OAUTH_SCOPE_PREFIX = 'mempalace:';
const METADATA_PATH = '/.well-known/oauth-protected-resource';
/** Leeway for clock skew between the issuer and this server on `exp`/`nbf`. */
const CLOCK_TOLERANCE_S = 5;

/** The metadata URL of a resource (RFC 9728 §3.1: the well-known segment goes before the path). */
export function metadataUrl(resource: string): string {
  const url = new URL(resource);
  const pathPart = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  return `${url.origin}${METADATA_PATH}${pathPart}`;
}

function scopesOf(payload: JWTPayload): Scope[] {
  const raw = typeof payload.scope === 'string' ? payload.scope.split(' ') : Array.isArray(payload.scp) ? payload.scp : [];
  const granted = raw
    .filter((s): s is string => typeof s === 'string' && s.startsWith(OAUTH_SCOPE_PREFIX))
    .map((s) => s.slice(OAUTH_SCOPE_PREFIX.length))
    .filter((s): s is Scope => (SCOPES as readonly string[]).includes(s));
  return impliedScopes(granted);
}

export class OAuthResourceServer {
  readonly resource: string;
  private jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  private jwksPending: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;

  constructor(private readonly settings: OAuthSettings, private readonly log: Logger) {
    if (!settings.resource) throw invalidArgument('MEMPALACE_OAUTH_RESOURCE', 'required', 'MEMPALACE_OAUTH_ISSUER is set: MEMPALACE_OAUTH_RESOURCE must name this server\'s resource URL (the audience of its access tokens), e.g. https://palace.example.com/mcp');
    try {
      this.resource = new URL(settings.resource).href;
    } catch {
      throw invalidArgument('MEMPALACE_OAUTH_RESOURCE', 'url', `MEMPALACE_OAUTH_RESOURCE '${settings.resource}' is not a URL`);
    }
  }

  /** `WWW-Authenticate` of a 401 (MCP authorization: the client finds the metadata from it). */
  challenge(): string {
    return `Bearer resource_metadata="${metadataUrl(this.resource)}", scope="${SCOPES.map((s) => OAUTH_SCOPE_PREFIX + s).join(' ')}"`;
  }

  /** RFC 9728 protected-resource metadata, at the resource's well-known URL and at the root one. */
  metadataRoutes(): { paths: string[]; handler: RequestHandler } {
    const body = {
      resource: this.resource,
      authorization_servers: [this.settings.issuer],
      scopes_supported: SCOPES.map((s) => OAUTH_SCOPE_PREFIX + s),
      bearer_methods_supported: ['header'],
      resource_name: 'MemPalace',
    };
    const own = new URL(metadataUrl(this.resource)).pathname;
    return { paths: [...new Set([own, METADATA_PATH])], handler: (_req, res) => { res.json(body); } };
  }

  private async keys(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    if (this.jwks) return this.jwks;
    this.jwksPending ??= (async () => {
      let jwksUrl = this.settings.jwksUrl;
      if (!jwksUrl) {
        const base = this.settings.issuer.replace(/\/$/, '');
        for (const wellKnown of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
          const res = await fetch(`${base}${wellKnown}`, { headers: { accept: 'application/json' } });
          if (!res.ok) continue;
          const meta = (await res.json()) as { jwks_uri?: unknown; issuer?: unknown };
          if (typeof meta.jwks_uri === 'string') {
            jwksUrl = meta.jwks_uri;
            break;
          }
        }
        if (!jwksUrl) throw new Error(`the issuer ${this.settings.issuer} publishes no jwks_uri in its discovery metadata`);
      }
      this.jwks = createRemoteJWKSet(new URL(jwksUrl));
      return this.jwks;
    })().finally(() => { this.jwksPending = undefined; });
    return this.jwksPending;
  }

  /** The principal of a valid access token, or null (expired, wrong issuer or audience, bad signature, not a JWT). */
  readonly verify: TokenVerifier = async (token) => {
    if (token.split('.').length !== 3) return null;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, await this.keys(), { issuer: this.settings.issuer, audience: this.resource, clockTolerance: CLOCK_TOLERANCE_S }));
    } catch (e) {
      if (e instanceof joseErrors.JOSEError) return null;
      this.log.warn(`mempalace api: OAuth verification failed: ${e instanceof Error ? e.message : String(e)}`);
      return null;
    }
    const identity = payload[this.settings.identityClaim];
    if (typeof identity !== 'string' || identity.trim() === '') return null;
    const principal: Principal = {
      caller: { identity: identity.trim(), scopes: scopesOf(payload) },
      key: `oauth:${createHash('sha256').update(`${String(payload.iss)}\u0000${identity}`).digest('hex').slice(0, 16)}`,
    };
    return principal;
  };
}

/** The resource server the configuration asks for, if any. */
export function oauthFromConfig(config: Config, log: Logger): OAuthResourceServer | undefined {
  return config.api.oauth ? new OAuthResourceServer(config.api.oauth, log) : undefined;
}
