/**
 * Bearer tokens of the HTTP API and `/mcp`: each token maps to one agent identity and its scopes
 * (docs/decisions.md "Identity in the team deployment").
 *
 * Sources, merged in this order (a token listed twice is a configuration error):
 *
 * - `MEMPALACE_TOKENS_FILE`: a JSON or YAML file
 *   `{ "tokens": [ { "token": "<secret>", "agent": "alice", "scopes": ["read", "write"], "roots": ["/srv/src/alice"] } ] }`;
 *   instead of `token` an entry may give `sha256`: the lowercase hex SHA-256 of the secret, so
 *   the file need not hold secrets. `roots` (optional, absolute directories) bounds the local
 *   sources this token may mine, sync or delete by, within the server's MEMPALACE_ALLOWED_ROOTS
 *   (palace/sources/sources.ts intersects the two); stateless HTTP cannot ask a client for MCP roots.
 *   An entry `{ "oauth_subject": "<issuer>#<subject>", "agent": "alice", "roots"?: [...] }` maps an
 *   OAuth access token's subject to an agent (its scopes still come from the token); unmapped,
 *   OAuth callers act as `oauth:<issuer>#<subject>`, a namespace no static agent may use.
 *   Any entry may carry `wings`, its per-wing grants (core/wing-grants.ts; README "Security
 *   model"); an admin token may not (it sees every wing). A mapped OAuth subject's `wings`
 *   replace those of its access token's claim.
 * - `MEMPALACE_API_TOKENS`: comma-separated `<token>=<agent>:<scope>+<scope>` entries, e.g.
 *   `s3cret=alice:read+write,t0ken=ops:admin`. The scopes follow the last `:` and the agent the
 *   last `=` before it, so tokens may contain `=` and agent names may contain `:`; neither may
 *   contain `,`.
 * - `MEMPALACE_MCP_HTTP_TOKEN` (docs/logstream.md §7.1): one shared token; it acts as the admin
 *   identity `local`, like the original's single-user server where any name was accepted.
 *
 * Scopes imply the ones below them: `admin` ⊇ `write` ⊇ `read` ⊇ `replicate` (core/scopes.ts holds
 * the table of what each tool and route needs); `replicate` alone is a mesh peer's pull token. With no token configured at all
 * every request acts as `local` with admin scope — allowed only on a loopback bind unless
 * `MEMPALACE_MCP_HTTP_ALLOW_INSECURE_NO_TOKEN=1` (see `assertBindAllowed`).
 *
 * Presented tokens are hashed and compared with every configured hash with
 * `crypto.timingSafeEqual`, without stopping at the first match. Tokens are never logged,
 * returned or put into errors.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Request, RequestHandler } from 'express';
import YAML from 'yaml';
import type { Config } from '../core/config.js';
import { PalaceError, invalidArgument } from '../core/errors.js';
import type { Scope } from '../core/scopes.js';
import { IMPLIED_SCOPES, SCOPES } from '../core/scopes.js';
import type { Caller } from '../core/caller.js';
import { OAUTH_IDENTITY_PREFIX, isOAuthIdentity, sameAgent } from '../core/agent-identity.js';
import { parseWingGrants } from '../core/wing-grants.js';
import type { WingGrants } from '../core/wing-grants.js';
import { refuse } from './limits.js';

export { SCOPES };
export type { Scope };

/** An authenticated request: the MCP caller plus a stable key for rate limiting (never the token). */
export interface Principal {
  caller: Caller;
  /** `token:<first 16 hex of the token's hash>`, or `open` without configured tokens. */
  key: string;
}

interface TokenEntry {
  hash: Buffer;
  caller: Caller;
}

/** The scopes these grant, implications included, in SCOPES order. */
export function impliedScopes(granted: readonly Scope[]): Scope[] {
  const out = new Set(granted.flatMap((s) => IMPLIED_SCOPES[s]));
  return SCOPES.filter((s) => out.has(s));
}

/** Another way to accept a bearer token (OAuth access tokens, api/oauth.ts). */
export interface TokenVerifier {
  /** The principal of a token, or null to refuse it; may throw a retryable PalaceError. */
  verify(token: string): Promise<Principal | null>;
  /** A token verified before and still valid, without I/O (rate limiting reads it before verification). */
  known(token: string): Principal | undefined;
}

/** A token file's mapping of an OAuth identity (`oauth:<issuer>#<subject>`) to an agent. */
interface SubjectMapping {
  identity: string;
  agent: string;
  roots?: string[] | undefined;
  /** Replaces the grants of the access token's claim when given. */
  wings?: WingGrants | undefined;
}
export const OPEN_IDENTITY = 'local';

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

function expandScopes(source: string, scopes: unknown): string[] {
  if (!Array.isArray(scopes) || scopes.length === 0)
    throw invalidArgument('scopes', 'non_empty_list', `${source}: every token needs at least one scope (${SCOPES.join(', ')})`);
  for (const s of scopes) {
    if (typeof s !== 'string' || !(SCOPES as readonly string[]).includes(s)) {
      throw invalidArgument('scopes', 'enum', `${source}: unknown scope ${JSON.stringify(s)}; expected one of: ${SCOPES.join(', ')}`);
    }
  }
  return impliedScopes(scopes as Scope[]);
}

/** A token's `roots`: absolute directories, kept at their real paths. */
function tokenRoots(source: string, agent: string, roots: unknown): string[] | undefined {
  if (roots === undefined || roots === null) return undefined;
  if (!Array.isArray(roots) || roots.length === 0 || roots.some((r) => typeof r !== 'string' || !path.isAbsolute(r))) {
    throw invalidArgument('roots', 'absolute_paths', `${source}: 'roots' of the token for agent '${agent}' must be a non-empty list of absolute directories`);
  }
  return (roots as string[]).map((r) => {
    try {
      return fs.realpathSync(r);
    } catch {
      return path.resolve(r);
    }
  });
}

/** A token's `wings` (core/wing-grants.ts); refused on an admin token, which sees every wing. */
function tokenWings(source: string, agent: string, scopes: readonly string[], wings: unknown): WingGrants | undefined {
  const grants = parseWingGrants(`${source}: the token for agent '${agent}'`, wings);
  if (grants && scopes.includes('admin')) {
    throw invalidArgument('wings', 'admin_sees_all',
      `${source}: the token for agent '${agent}' has the admin scope, which sees every wing; drop 'wings' or 'admin'`);
  }
  return grants;
}

function entry(source: string, secretOrHash: { token?: unknown; sha256?: unknown }, agent: unknown, scopes: unknown, roots?: unknown,
  wings?: unknown): TokenEntry {
  const name = agentName(source, agent);
  let hash: Buffer;
  if (typeof secretOrHash.token === 'string' && secretOrHash.token.length > 0) hash = sha256(secretOrHash.token);
  else if (typeof secretOrHash.sha256 === 'string' && /^[0-9a-f]{64}$/.test(secretOrHash.sha256)) hash = Buffer.from(secretOrHash.sha256, 'hex');
  else throw invalidArgument('token', 'required', `${source}: the entry for agent '${name}' needs a non-empty token or a 64-hex sha256`);
  const bound = tokenRoots(source, name, roots);
  const expanded = expandScopes(source, scopes);
  const grants = tokenWings(source, name, expanded, wings);
  return { hash, caller: { identity: name, scopes: expanded, ...(bound ? { roots: bound } : {}), ...(grants ? { wings: grants } : {}) } };
}

/** A configured agent name: non-empty, and outside the OAuth namespace. */
function agentName(source: string, agent: unknown): string {
  if (typeof agent !== 'string' || agent.trim() === '') throw invalidArgument('agent', 'non_empty_string', `${source}: every token needs a non-empty agent`);
  if (isOAuthIdentity(agent))
    throw invalidArgument('agent', 'reserved_namespace',
      `${source}: agent '${agent.trim()}' is in the ${OAUTH_IDENTITY_PREFIX} namespace of OAuth identities; map an OAuth subject with an oauth_subject entry instead`);
  return agent.trim();
}

type FileEntry = { token?: unknown; sha256?: unknown; agent?: unknown; scopes?: unknown; roots?: unknown; wings?: unknown; oauth_subject?: unknown };

function subjectMapping(file: string, e: FileEntry): SubjectMapping {
  const subject = e.oauth_subject;
  if (typeof subject !== 'string' || !/^[^#]+#.+$/.test(subject.trim()))
    throw invalidArgument('oauth_subject', 'format', `${file}: oauth_subject must look like <issuer>#<subject>`);
  if (e.token !== undefined || e.sha256 !== undefined)
    throw invalidArgument('oauth_subject', 'one_of', `${file}: an entry has either a token (or sha256) or an oauth_subject, not both`);
  if (e.scopes !== undefined)
    throw invalidArgument('scopes', 'oauth_scopes',
      `${file}: the scopes of an OAuth subject come from its access token; remove 'scopes' from the oauth_subject entry '${subject.trim()}'`);
  const agent = agentName(file, e.agent);
  return { identity: `${OAUTH_IDENTITY_PREFIX}${subject.trim()}`, agent, roots: tokenRoots(file, agent, e.roots),
    wings: parseWingGrants(`${file}: oauth_subject '${subject.trim()}'`, e.wings) };
}

/** The token file's entries: static tokens, and OAuth subjects mapped to agents. */
export function parseTokenFileEntries(file: string, text: string): { tokens: TokenEntry[]; subjects: SubjectMapping[] } {
  let doc: unknown;
  try {
    doc = /\.json$/i.test(file) ? JSON.parse(text) : YAML.parse(text);
  } catch (e) {
    throw invalidArgument('MEMPALACE_TOKENS_FILE', 'syntax', `${file} is malformed: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
  }
  const list = (doc as { tokens?: unknown } | null)?.tokens;
  if (!Array.isArray(list)) throw invalidArgument('MEMPALACE_TOKENS_FILE', 'tokens_list', `${file}: 'tokens' must be a list`);
  const tokens: TokenEntry[] = [];
  const subjects: SubjectMapping[] = [];
  for (const raw of list as unknown[]) {
    const e = (raw ?? {}) as FileEntry;
    if (e.oauth_subject !== undefined) subjects.push(subjectMapping(file, e));
    else tokens.push(entry(file, e, e.agent, e.scopes, e.roots, e.wings));
  }
  return { tokens, subjects };
}

export function parseTokenEnv(value: string): TokenEntry[] {
  return value.split(',').map((s) => s.trim()).filter((s) => s.length > 0).map((item, i) => {
    const source = `MEMPALACE_API_TOKENS entry ${i + 1}`;
    const colon = item.lastIndexOf(':');
    const eq = colon < 0 ? -1 : item.lastIndexOf('=', colon);
    if (colon < 0 || eq <= 0) throw invalidArgument('MEMPALACE_API_TOKENS', 'format', `${source} must look like <token>=<agent>:<scope>+<scope>`);
    return entry(source, { token: item.slice(0, eq) }, item.slice(eq + 1, colon), item.slice(colon + 1).split('+').map((s) => s.trim()).filter(Boolean));
  });
}

export class Authenticator {
  private readonly subjects: Map<string, SubjectMapping>;

  private constructor(private readonly entries: TokenEntry[], private readonly verifier?: TokenVerifier, subjects: SubjectMapping[] = []) {
    this.subjects = new Map(subjects.map((m) => [m.identity, m]));
  }

  /** `verifier` accepts tokens the static table does not know (OAuth); with one, the API is never open. */
  static fromConfig(config: Config, verifier?: TokenVerifier): Authenticator {
    const entries: TokenEntry[] = [];
    const subjects: SubjectMapping[] = [];
    if (config.api.tokensFile) {
      let text: string;
      try {
        text = fs.readFileSync(config.api.tokensFile, 'utf8');
      } catch (e) {
        throw invalidArgument('MEMPALACE_TOKENS_FILE', 'readable',
          `cannot read the tokens file ${config.api.tokensFile}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
      }
      const parsed = parseTokenFileEntries(config.api.tokensFile, text);
      entries.push(...parsed.tokens);
      subjects.push(...parsed.subjects);
    }
    const issuer = config.api.oauth?.issuer;
    for (const m of subjects) {
      // A mapping names its issuer, so it cannot start matching tokens of an issuer configured later.
      if (issuer === undefined || !m.identity.startsWith(`${OAUTH_IDENTITY_PREFIX}${issuer}#`)) {
        throw invalidArgument('oauth_subject', 'oauth_issuer',
          `${config.api.tokensFile}: oauth_subject '${
            m.identity.slice(OAUTH_IDENTITY_PREFIX.length)
          }' does not name the configured issuer (MEMPALACE_OAUTH_ISSUER=${issuer ?? 'unset'})`);
      }
    }
    if (config.api.tokens) entries.push(...parseTokenEnv(config.api.tokens));
    if (config.mcp.httpToken) entries.push(entry('MEMPALACE_MCP_HTTP_TOKEN', { token: config.mcp.httpToken }, OPEN_IDENTITY, ['admin']));
    return Authenticator.fromEntries(entries, verifier, subjects);
  }

  /** For tests and embedders: tokens given directly. */
  static fromTokens(tokens: Iterable<[string, Caller]>, verifier?: TokenVerifier): Authenticator {
    return Authenticator.fromEntries([...tokens].map(([token, c]) => entry('tokens', { token }, c.identity, c.scopes, c.roots, c.wings)), verifier);
  }

  private static fromEntries(entries: TokenEntry[], verifier?: TokenVerifier, subjects: SubjectMapping[] = []): Authenticator {
    const seen = new Set<string>();
    for (const e of entries) {
      const hex = e.hash.toString('hex');
      if (seen.has(hex))
        throw invalidArgument('tokens', 'unique', `a token is configured twice (agents: ${
          entries.filter((x) => x.hash.equals(e.hash)).map((x) =>
            x.caller.identity
          ).join(', ')
        })`);
      seen.add(hex);
    }
    return new Authenticator(entries, verifier, subjects);
  }

  /** No token configured (and no verifier): every request acts as the local admin. */
  get open(): boolean {
    return this.entries.length === 0 && !this.verifier;
  }

  /** `resolve`, then the verifier for a bearer token the table does not know. */
  async resolveAsync(authorization: string | undefined): Promise<Principal | null> {
    const known = this.resolve(authorization);
    if (known || !this.verifier) return known;
    const match = typeof authorization === 'string' ? BEARER.exec(authorization) : null;
    return match ? this.mapped(await this.verifier.verify(match[1]!)) : null;
  }

  /** The principal behind `Authorization: Bearer <token>` without I/O: a static token or one the verifier knows already. */
  resolve(authorization: string | undefined): Principal | null {
    const known = this.resolveStatic(authorization);
    if (known || !this.verifier) return known;
    const match = typeof authorization === 'string' ? BEARER.exec(authorization) : null;
    return match ? this.mapped(this.verifier.known(match[1]!) ?? null) : null;
  }

  /** An OAuth principal as the token file maps its subject, if it does. */
  private mapped(principal: Principal | null): Principal | null {
    const m = principal ? this.subjects.get(principal.caller.identity) : undefined;
    if (!principal || !m) return principal;
    const wings = m.wings ?? principal.caller.wings;
    return {
      caller: { identity: m.agent, scopes: principal.caller.scopes, ...(m.roots ? { roots: m.roots } : {}), ...(wings ? { wings } : {}) },
      key: principal.key,
    };
  }

  private resolveStatic(authorization: string | undefined): Principal | null {
    if (this.open) return { caller: { identity: OPEN_IDENTITY, scopes: [...SCOPES] }, key: 'open' };
    const match = typeof authorization === 'string' ? BEARER.exec(authorization) : null;
    if (!match) return null;
    const presented = sha256(match[1]!);
    let found: TokenEntry | undefined;
    for (const e of this.entries) {
      // Every entry is compared, so the time taken does not say which one matched.
      if (timingSafeEqual(presented, e.hash) && !found) found = e;
    }
    return found ? { caller: found.caller, key: `token:${found.hash.toString('hex').slice(0, 16)}` } : null;
  }
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

const principals = new WeakMap<Request, Principal | null>();

/**
 * Resolve every request's principal up front (a verifier may need I/O), for `principalOf`. A
 * verifier that cannot answer (its issuer is down) refuses the request with its retryable error.
 */
export function authenticate(auth: Authenticator): RequestHandler {
  return (req, res, next) => {
    auth.resolveAsync(req.headers.authorization).then((p) => {
      principals.set(req, p);
      next();
    }, (e: unknown) => {
      if (e instanceof PalaceError) refuse(req, res, e);
      else next(e);
    });
  };
}

/** The request's principal, resolved once per request. */
export function principalOf(auth: Authenticator, req: Request): Principal | null {
  if (!principals.has(req)) principals.set(req, auth.resolve(req.headers.authorization));
  return principals.get(req)!;
}

export function hasScope(caller: Caller, scope: Scope): boolean {
  return caller.scopes.includes(scope);
}

/** 403 for a caller without the scope a route needs. */
export function missingScope(caller: Caller, scope: Scope): PalaceError {
  return new PalaceError('permission_denied', `this token (agent '${caller.identity}') lacks the '${scope}' scope this route needs`, {
    rule: 'scope',
    details: { required_scope: scope },
  });
}

/** Fields that name the writing agent (docs/decisions.md "Identity"); `agent` is mine's. */
export const IDENTITY_FIELDS = ['added_by', 'from_agent', 'agent_name', 'created_by', 'agent'] as const;

/**
 * A write naming an agent must name the caller's own identity unless the caller is admin;
 * the error names the field and nothing is written.
 */
export function assertOwnIdentity(caller: Caller, body: unknown): void {
  if (hasScope(caller, 'admin') || typeof body !== 'object' || body === null || Array.isArray(body)) return;
  for (const field of IDENTITY_FIELDS) {
    const value = (body as Record<string, unknown>)[field];
    if (value === undefined || value === null) continue;
    if (typeof value === 'string' && sameAgent(value, caller.identity)) continue;
    throw new PalaceError('permission_denied', `${field} must be this token's identity '${caller.identity}' (an admin token may write for others)`, {
      field,
      rule: 'token_identity',
    });
  }
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** docs/logstream.md §7.1: a non-loopback bind without any token is refused unless explicitly allowed. */
export function assertBindAllowed(host: string, auth: Authenticator, config: Config): void {
  if (!auth.open || config.api.allowInsecureNoToken || LOOPBACK.has(host.toLowerCase()) || host.startsWith('127.')) return;
  throw invalidArgument('host', 'token_required',
    `refusing to listen on ${host} without a bearer token: configure MEMPALACE_TOKENS_FILE or MEMPALACE_API_TOKENS (or set MEMPALACE_MCP_HTTP_ALLOW_INSECURE_NO_TOKEN=1 behind a trusted proxy)`);
}
