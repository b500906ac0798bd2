/**
 * OAuth 2.1 resource server per the MCP authorization spec: with `MEMPALACE_OAUTH_ISSUER` set,
 * `/mcp` and `/v1` accept JWT access tokens (RFC 9068) from that issuer besides the static tokens.
 *
 * - Before any key is fetched, a token must decode as a JWT typed `at+jwt` (RFC 9068 §2.1; `JWT`
 *   or untyped only with MEMPALACE_OAUTH_ALLOW_JWT_TYP), name the configured issuer and this
 *   resource, and carry an `exp` still ahead: anything else is refused without I/O.
 * - Keys: api/oauth-keys.ts (discovery and JWKS with a deadline, a failure cache and a host
 *   policy). An issuer that cannot be reached answers 503 `store_unavailable`, retryable.
 * - Checks: signature (asymmetric algorithms only), `iss`, `aud` = MEMPALACE_OAUTH_RESOURCE exactly
 *   as configured, `exp` (required) and `nbf` with a 5 s clock tolerance.
 * - Identity: `oauth:<issuer>#<claim>` (core/agent-identity.ts) of the claim named by
 *   `MEMPALACE_OAUTH_IDENTITY_CLAIM` (default `sub`); the token file may map it to an agent.
 * - Scopes `mempalace:<scope>` (in `scope` or `scp`) map to the static tokens' scopes, with the
 *   same implications.
 * - Per-wing grants: the `mempalace_wings` claim, the same map as a token file's `wings`
 *   (core/wing-grants.ts). A malformed claim refuses the token: read as absent it would grant
 *   every wing. An admin token's claim is ignored (admin sees every wing).
 * - Discovery: RFC 9728 protected-resource metadata, a 401 challenge naming it, and a 403 naming
 *   the missing scope (RFC 6750 §3.1).
 * - A verified token is remembered until it expires, so its next requests resolve without I/O
 *   (and are rate-limited as its principal, not as their client address).
 */
import { createHash } from 'node:crypto';
import type { RequestHandler } from 'express';
import { decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose';
import type { JWTPayload } from 'jose';
import type { Config, OAuthSettings } from '../core/config.js';
import type { Logger } from '../core/log.js';
import { oauthIdentity } from '../core/agent-identity.js';
import { invalidArgument, isPalaceError } from '../core/errors.js';
import { WINGS_CLAIM, parseWingGrants } from '../core/wing-grants.js';
import type { WingGrants } from '../core/wing-grants.js';
import type { Principal, Scope, TokenVerifier } from './auth.js';
import { SCOPES, impliedScopes } from './auth.js';
import { httpsRequired } from './oauth-fetch.js';
import { IssuerKeys } from './oauth-keys.js';

export const OAUTH_SCOPE_PREFIX = 'mempalace:';
const METADATA_PATH = '/.well-known/oauth-protected-resource';
/** Leeway for clock skew between the issuer and this server on `exp`/`nbf`. */
const CLOCK_TOLERANCE_S = 5;
/** Signature algorithms of public keys only: a JWKS never holds a shared secret. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
/** Verified tokens remembered at once; the oldest is forgotten first. */
const VERIFIED_CACHE_MAX = 10_000;

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

/** `typ` as jose compares it: lowercased, `application/` prefixed when it has no media type. */
function mediaType(typ: unknown): string | undefined {
  if (typeof typ !== 'string') return undefined;
  const t = typ.toLowerCase();
  return t.includes('/') ? t : `application/${t}`;
}

function configuredUrl(name: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidArgument(name, 'url', `${name} '${value}' is not a URL`);
  }
  if (httpsRequired(url)) throw invalidArgument(name, 'https', `${name} '${value}' must use https (plain http only on loopback)`);
  return url;
}

export class OAuthResourceServer implements TokenVerifier {
  /** The audience tokens must carry, exactly as configured (RFC 9728 `resource`). */
  readonly resource: string;
  readonly issuer: string;
  private readonly keys: IssuerKeys;
  private readonly verified = new Map<string, { principal: Principal; expiresAtMs: number }>();

  constructor(private readonly settings: OAuthSettings, private readonly log: Logger) {
    if (!settings.resource)
      throw invalidArgument('MEMPALACE_OAUTH_RESOURCE', 'required',
        "MEMPALACE_OAUTH_ISSUER is set: MEMPALACE_OAUTH_RESOURCE must name this server's resource URL (the audience of its access tokens), e.g. https://palace.example.com/mcp");
    let resource: URL;
    try {
      resource = new URL(settings.resource);
    } catch {
      throw invalidArgument('MEMPALACE_OAUTH_RESOURCE', 'url', `MEMPALACE_OAUTH_RESOURCE '${settings.resource}' is not a URL`);
    }
    if (resource.hash !== '')
      throw invalidArgument('MEMPALACE_OAUTH_RESOURCE', 'no_fragment', 'MEMPALACE_OAUTH_RESOURCE must not have a fragment (RFC 8707 §2)');
    configuredUrl('MEMPALACE_OAUTH_ISSUER', settings.issuer);
    if (settings.jwksUrl) configuredUrl('MEMPALACE_OAUTH_JWKS_URL', settings.jwksUrl);
    this.resource = settings.resource;
    this.issuer = settings.issuer;
    this.keys = new IssuerKeys({ issuer: settings.issuer, jwksUrl: settings.jwksUrl, jwksHosts: settings.jwksHosts, timeoutMs: settings.timeoutMs }, log);
  }

  private get scopeList(): string {
    return SCOPES.map((s) => OAUTH_SCOPE_PREFIX + s).join(' ');
  }

  /** `WWW-Authenticate` of a 401 (MCP authorization: the client finds the metadata from it). */
  challenge(): string {
    return `Bearer resource_metadata="${metadataUrl(this.resource)}", scope="${this.scopeList}"`;
  }

  /** `WWW-Authenticate` of a 403 for a token without `scope` (RFC 6750 §3.1; MCP step-up authorization). */
  insufficientScope(scope: Scope): string {
    return `Bearer error="insufficient_scope", scope="${OAUTH_SCOPE_PREFIX}${scope}", resource_metadata="${metadataUrl(this.resource)}"`;
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
    return { paths: [...new Set([own, METADATA_PATH])], handler: (_req, res) => {
      res.json(body);
    } };
  }

  /** A token verified before that has not expired: its principal, without I/O. */
  known(token: string): Principal | undefined {
    const key = tokenKey(token);
    const hit = this.verified.get(key);
    if (!hit) return undefined;
    if (Date.now() < hit.expiresAtMs) return hit.principal;
    this.verified.delete(key);
    return undefined;
  }

  /** Whether a token could be one of ours: checked on its unverified contents, before any fetch. */
  private plausible(token: string): { kid: string | undefined } | undefined {
    if (token.split('.').length !== 3) return undefined;
    try {
      const header = decodeProtectedHeader(token);
      const claims = decodeJwt(token);
      const typ = mediaType(header.typ);
      const typed = typ === 'application/at+jwt' || (this.settings.allowJwtTyp && (typ === undefined || typ === 'application/jwt'));
      const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
      const live = typeof claims.exp === 'number' && claims.exp + CLOCK_TOLERANCE_S > Date.now() / 1000;
      if (!typed || claims.iss !== this.issuer || !aud.includes(this.resource) || !live) return undefined;
      return { kid: typeof header.kid === 'string' ? header.kid : undefined };
    } catch {
      return undefined;
    }
  }

  /**
   * The principal of a valid access token, or null (not a JWT, wrong type, issuer or audience,
   * no `exp` or expired, bad signature). Throws `store_unavailable` when the issuer's keys cannot be had.
   */
  async verify(token: string): Promise<Principal | null> {
    const known = this.known(token);
    if (known) return known;
    const plausible = this.plausible(token);
    if (!plausible) return null;
    const keys = await this.keys.keysFor(plausible.kid);
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: this.issuer,
        audience: this.resource,
        clockTolerance: CLOCK_TOLERANCE_S,
        requiredClaims: ['exp'],
        algorithms: ALGORITHMS,
      }));
    } catch (e) {
      if (e instanceof joseErrors.JOSEError) return null;
      throw e;
    }
    const claim = payload[this.settings.identityClaim];
    const identity = typeof claim === 'string' ? oauthIdentity(this.issuer, claim.trim()) : undefined;
    if (identity === undefined) {
      this.log.warn(`mempalace api: OAuth token refused: its '${this.settings.identityClaim}' claim is missing or unusable as an agent identity`);
      return null;
    }
    const scopes = scopesOf(payload);
    let wings: WingGrants | undefined;
    try {
      wings = scopes.includes('admin') ? undefined : parseWingGrants(`the '${WINGS_CLAIM}' claim`, payload[WINGS_CLAIM]);
    } catch (e) {
      if (!isPalaceError(e)) throw e;
      this.log.warn(`mempalace api: OAuth token refused: ${e.message}`);
      return null;
    }
    const principal: Principal = {
      caller: { identity, scopes, ...(wings ? { wings } : {}) },
      key: `oauth:${createHash('sha256').update(identity).digest('hex').slice(0, 16)}`,
    };
    this.remember(token, principal, payload.exp! * 1000);
    return principal;
  }

  private remember(token: string, principal: Principal, expiresAtMs: number): void {
    if (this.verified.size >= VERIFIED_CACHE_MAX) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(tokenKey(token), { principal, expiresAtMs });
  }
}

function tokenKey(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The resource server the configuration asks for, if any. */
export function oauthFromConfig(config: Config, log: Logger): OAuthResourceServer | undefined {
  return config.api.oauth ? new OAuthResourceServer(config.api.oauth, log) : undefined;
}
