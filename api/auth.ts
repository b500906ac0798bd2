/**
 * Bearer tokens of the HTTP API and `/mcp`: each token maps to one agent identity and its scopes
 * (DECISIONS "Identity in the team deployment").
 *
 * Sources, merged in this order (a token listed twice is a configuration error):
 *
 * - `MEMPALACE_TOKENS_FILE`: a JSON or YAML file
 *   `{ "tokens": [ { "token": "<secret>", "agent": "alice", "scopes": ["read", "write"], "roots": ["/srv/src/alice"] } ] }`;
 *   instead of `token` an entry may give `sha256`: the lowercase hex SHA-256 of the secret, so
 *   the file need not hold secrets. `roots` (optional, absolute directories) bounds the local
 *   sources this token may mine, sync or delete by, within the server's MEMPALACE_ALLOWED_ROOTS
 *   (palace/sources.ts intersects the two); stateless HTTP cannot ask a client for MCP roots.
 * - `MEMPALACE_API_TOKENS`: comma-separated `<token>=<agent>:<scope>+<scope>` entries, e.g.
 *   `s3cret=alice:read+write,t0ken=ops:admin`. The scopes follow the last `:` and the agent the
 *   last `=` before it, so tokens may contain `=` and agent names may contain `:`; neither may
 *   contain `,`.
 * - `MEMPALACE_MCP_HTTP_TOKEN` (logstream.md §7.1): one shared token; it acts as the admin
 *   identity `local`, like the original's single-user server where any name was accepted.
 *
 * Scopes imply the ones below them: `admin` ⊇ `write` ⊇ `read` (core/scopes.ts holds the table of
 * what each tool and route needs). With no token configured at all
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

/** Another way to accept a bearer token (OAuth access tokens, api/oauth.ts); null refuses it. */
export type TokenVerifier = (token: string) => Promise<Principal | null>;
export const OPEN_IDENTITY = 'local';

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

function expandScopes(source: string, scopes: unknown): string[] {
  if (!Array.isArray(scopes) || scopes.length === 0) throw invalidArgument('scopes', 'non_empty_list', `${source}: every token needs at least one scope (${SCOPES.join(', ')})`);
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

function entry(source: string, secretOrHash: { token?: unknown; sha256?: unknown }, agent: unknown, scopes: unknown, roots?: unknown): TokenEntry {
  if (typeof agent !== 'string' || agent.trim() === '') throw invalidArgument('agent', 'non_empty_string', `${source}: every token needs a non-empty agent`);
  let hash: Buffer;
  if (typeof secretOrHash.token === 'string' && secretOrHash.token.length > 0) hash = sha256(secretOrHash.token);
  else if (typeof secretOrHash.sha256 === 'string' && /^[0-9a-f]{64}$/.test(secretOrHash.sha256)) hash = Buffer.from(secretOrHash.sha256, 'hex');
  else throw invalidArgument('token', 'required', `${source}: the entry for agent '${agent}' needs a non-empty token or a 64-hex sha256`);
  const bound = tokenRoots(source, agent.trim(), roots);
  return { hash, caller: { identity: agent.trim(), scopes: expandScopes(source, scopes), ...(bound ? { roots: bound } : {}) } };
}

export function parseTokenFile(file: string, text: string): TokenEntry[] {
  let doc: unknown;
  try {
    doc = /\.json$/i.test(file) ? JSON.parse(text) : YAML.parse(text);
  } catch (e) {
    throw invalidArgument('MEMPALACE_TOKENS_FILE', 'syntax', `${file} is malformed: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
  }
  const list = (doc as { tokens?: unknown } | null)?.tokens;
  if (!Array.isArray(list)) throw invalidArgument('MEMPALACE_TOKENS_FILE', 'tokens_list', `${file}: 'tokens' must be a list`);
  return list.map((raw: unknown) => {
    const e = (raw ?? {}) as { token?: unknown; sha256?: unknown; agent?: unknown; scopes?: unknown; roots?: unknown };
    return entry(file, e, e.agent, e.scopes, e.roots);
  });
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
  private constructor(private readonly entries: TokenEntry[], private readonly verifier?: TokenVerifier) {}

  /** `verifier` accepts tokens the static table does not know (OAuth); with one, the API is never open. */
  static fromConfig(config: Config, verifier?: TokenVerifier): Authenticator {
    const entries: TokenEntry[] = [];
    if (config.api.tokensFile) {
      let text: string;
      try {
        text = fs.readFileSync(config.api.tokensFile, 'utf8');
      } catch (e) {
        throw invalidArgument('MEMPALACE_TOKENS_FILE', 'readable', `cannot read the tokens file ${config.api.tokensFile}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
      }
      entries.push(...parseTokenFile(config.api.tokensFile, text));
    }
    if (config.api.tokens) entries.push(...parseTokenEnv(config.api.tokens));
    if (config.mcp.httpToken) entries.push(entry('MEMPALACE_MCP_HTTP_TOKEN', { token: config.mcp.httpToken }, OPEN_IDENTITY, ['admin']));
    return Authenticator.fromEntries(entries, verifier);
  }

  /** For tests and embedders: tokens given directly. */
  static fromTokens(tokens: Iterable<[string, Caller]>, verifier?: TokenVerifier): Authenticator {
    return Authenticator.fromEntries([...tokens].map(([token, c]) => entry('tokens', { token }, c.identity, c.scopes, c.roots)), verifier);
  }

  private static fromEntries(entries: TokenEntry[], verifier?: TokenVerifier): Authenticator {
    const seen = new Set<string>();
    for (const e of entries) {
      const hex = e.hash.toString('hex');
      if (seen.has(hex)) throw invalidArgument('tokens', 'unique', `a token is configured twice (agents: ${entries.filter((x) => x.hash.equals(e.hash)).map((x) => x.caller.identity).join(', ')})`);
      seen.add(hex);
    }
    return new Authenticator(entries, verifier);
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
    return match ? this.verifier(match[1]!) : null;
  }

  /** The principal behind `Authorization: Bearer <token>`, or null (missing, malformed or unknown). */
  resolve(authorization: string | undefined): Principal | null {
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

/** Resolve every request's principal up front (a verifier may need I/O), for `principalOf`. */
export function authenticate(auth: Authenticator): RequestHandler {
  return (req, _res, next) => {
    auth.resolveAsync(req.headers.authorization).then((p) => {
      principals.set(req, p);
      next();
    }, next);
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
    rule: 'scope', details: { required_scope: scope },
  });
}

/** Fields that name the writing agent (DECISIONS "Identity"); `agent` is mine's. */
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
    if (typeof value === 'string' && value.trim().toLowerCase() === caller.identity.toLowerCase()) continue;
    throw new PalaceError('permission_denied', `${field} must be this token's identity '${caller.identity}' (an admin token may write for others)`, {
      field, rule: 'token_identity',
    });
  }
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** logstream.md §7.1: a non-loopback bind without any token is refused unless explicitly allowed. */
export function assertBindAllowed(host: string, auth: Authenticator, config: Config): void {
  if (!auth.open || config.api.allowInsecureNoToken || LOOPBACK.has(host.toLowerCase()) || host.startsWith('127.')) return;
  throw invalidArgument('host', 'token_required', `refusing to listen on ${host} without a bearer token: configure MEMPALACE_TOKENS_FILE or MEMPALACE_API_TOKENS (or set MEMPALACE_MCP_HTTP_ALLOW_INSECURE_NO_TOKEN=1 behind a trusted proxy)`);
}
