/**
 * The one module that decides what a job may read, for every entry point (MCP tools, REST
 * routes, the CLI) and again inside the job activities on the worker, which may see another
 * filesystem than the API replica.
 *
 * - Local sources resolve to their canonical real path, which must lie inside every bound of
 *   the caller's policy: the server's MEMPALACE_ALLOWED_ROOTS, the token's `roots`, the MCP
 *   client's roots. A path whose own spelling is inside but whose real path is not (a symlink,
 *   or a symlinked directory above it) is refused with rule `symlink_outside_roots`. A path
 *   outside is refused before anything is read from it, so a caller cannot probe the disk.
 * - Git sources: `https` and `ssh` only, to hosts matching MEMPALACE_GIT_ALLOWED_HOSTS
 *   (`host[:port]` patterns; none = no network git), never to loopback, link-local or private
 *   addresses unless the host is listed exactly; `file://` URLs and local repository paths are
 *   directories and obey the roots; `transport::address` forms (`ext::`) are refused.
 */
import dns from 'node:dns/promises';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../../core/config.js';
import { invalidArgument } from '../../core/errors.js';
import type { GitCredential } from '../../core/url-credentials.js';
import { splitUrlCredential } from '../../core/url-credentials.js';

import type { RootBound, SourceSpec } from '../../stores/ports/job-engine.js';

export type { RootBound, SourceSpec } from '../../stores/ports/job-engine.js';

/**
 * Every rule by which a source this module resolves may be refused, beyond the request schema
 * (the OpenAPI document lists them on the routes that take a source).
 */
export const SOURCE_RULES = [
  'allowed_roots',
  'token_roots',
  'client_roots',
  'local_sources_disabled',
  'non_empty_string',
  'file_url',
  'local_directory',
  'exists',
  'symlink_outside_roots',
  'git_url',
  'git_scheme',
  'git_allowed_hosts',
  'git_host_resolves',
  'git_private_address',
  'git_alternates',
  'git_ref',
] as const;

/** What one caller may read. A path must satisfy every bound; no bounds = anywhere. */
export interface SourcePolicy {
  bounds: RootBound[];
  gitAllowedHosts: string[];
}

export interface PolicyInput {
  /** The authenticated token's `roots` (HTTP callers). */
  tokenRoots?: readonly string[] | undefined;
  /** The MCP client's roots when it declares the capability; an empty list allows no source (fail closed). */
  clientRoots?: readonly string[] | undefined;
  /** Bounds computed by the entry point that started the job, carried in its spec. */
  carried?: readonly RootBound[] | undefined;
}

/** The policy of a caller of this process (entry point or worker). */
export function sourcePolicy(config: Pick<Config, 'allowedRoots' | 'sources'>, input: PolicyInput = {}): SourcePolicy {
  const bounds: RootBound[] = [];
  if (config.allowedRoots.length > 0) bounds.push({ rule: 'allowed_roots', roots: [...config.allowedRoots] });
  else if (config.sources.requireAllowedRoots) bounds.push({ rule: 'local_sources_disabled', roots: [] });
  if (input.tokenRoots) bounds.push({ rule: 'token_roots', roots: [...input.tokenRoots] });
  if (input.clientRoots !== undefined) bounds.push({ rule: 'client_roots', roots: [...input.clientRoots] });
  for (const b of input.carried ?? []) bounds.push({ rule: b.rule, roots: [...b.roots] });
  return { bounds, gitAllowedHosts: [...config.sources.gitAllowedHosts] };
}

/** Whether `p` is `root` or lies below it (both absolute, normalised). */
export function isWithin(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

async function realOrResolved(p: string): Promise<string> {
  return fs.realpath(p).catch(() => path.resolve(p));
}

/** Both spellings of each root: as configured, and its real path (a root may sit under a symlink). */
async function spellings(roots: readonly string[]): Promise<string[]> {
  const out = new Set<string>();
  for (const r of roots) {
    out.add(path.resolve(r));
    out.add(await realOrResolved(r));
  }
  return [...out];
}

function boundMessage(field: string, value: string, bound: RootBound): string {
  switch (bound.rule) {
    case 'local_sources_disabled':
      return `${field} '${value}' is a local path, and this server reads no local sources: set MEMPALACE_ALLOWED_ROOTS, or start serve with --allow-any-source`;
    case 'token_roots':
      return `${field} '${value}' is outside this token's roots (${bound.roots.join(', ')})`;
    case 'client_roots':
      return bound.roots.length === 0
        ? `${field} '${value}' is outside the MCP client's roots: the client offers no roots`
        : `${field} '${value}' is outside the MCP client's roots (${bound.roots.join(', ')})`;
    default:
      return `${field} '${value}' is outside the allowed roots (${bound.roots.join(', ')})`;
  }
}

/** The first bound `p` breaks, or undefined. */
async function brokenBound(p: string, policy: SourcePolicy): Promise<RootBound | undefined> {
  for (const bound of policy.bounds) {
    const roots = await spellings(bound.roots);
    if (!roots.some((r) => isWithin(r, p))) return bound;
  }
  return undefined;
}

/** Whether an absolute path (a symlink's target, a stored source) lies inside every bound of the policy. */
export async function pathAllowed(p: string, policy: SourcePolicy): Promise<boolean> {
  return (await brokenBound(p, policy)) === undefined;
}

function expandHome(p: string): string {
  return p === '~' || p.startsWith('~/') ? path.join(os.homedir(), p.slice(1)) : p;
}

const URL_SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;
const TRANSPORT_FORM = /^[A-Za-z][A-Za-z0-9+.-]*::/;

/** A local path given as a path or a `file://` URL; anything else that names a scheme is refused. */
function localPathOf(field: string, value: string): string {
  const scheme = URL_SCHEME.exec(value)?.[1]?.toLowerCase();
  if (scheme === 'file') {
    try {
      return fileURLToPath(value);
    } catch (e) {
      throw invalidArgument(field, 'file_url', `${field} '${value}' is not a valid file:// URL: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  if (scheme !== undefined || TRANSPORT_FORM.test(value)) {
    throw invalidArgument(field, 'local_directory',
      `${field} '${value}' is a URL; give a directory (a git repository is mined with a ref: POST /v1/jobs/mine with "ref", or mempalace mine --ref)`);
  }
  return path.resolve(expandHome(value));
}

/**
 * The canonical real path of a local source (a directory; with `allowFile` also a file), checked
 * against the policy before and after resolving links.
 */
export async function resolveLocalSource(field: string, value: string, policy: SourcePolicy, opts: { allowFile?: boolean } = {}): Promise<string> {
  const given = value.trim();
  if (given === '') throw invalidArgument(field, 'non_empty_string', `${field} must be a non-empty string`);
  const abs = localPathOf(field, given);
  const lexical = await brokenBound(abs, policy);
  if (lexical) throw invalidArgument(field, lexical.rule, boundMessage(field, given, lexical));
  let real: string;
  try {
    real = await fs.realpath(abs);
  } catch {
    throw invalidArgument(field, 'exists', `${field} directory not found: '${given}'`);
  }
  const broken = await brokenBound(real, policy);
  if (broken) {
    throw invalidArgument(field, 'symlink_outside_roots',
      `${field} '${given}' resolves through a symbolic link to '${real}', which is outside the ${
        broken.rule === 'allowed_roots' ? 'allowed roots' : broken.rule.replace('_', ' ')
      }`, { bound: broken.rule });
  }
  const stat = await fs.stat(real).catch(() => undefined);
  if (!stat || !(stat.isDirectory() || (opts.allowFile && stat.isFile()))) {
    throw invalidArgument(field, 'exists', `${field} directory not found: '${given}'`);
  }
  return real;
}

/**
 * A stored `source_file` value a caller may delete by: an absolute path must lie inside the
 * caller's roots (by its spelling: the file may be gone); git locations (`<url>:<path>`) are
 * not local paths. A server that reads no local sources still deletes what it stores.
 */
export async function assertStoredSourceAllowed(field: string, value: string, policy: SourcePolicy): Promise<void> {
  if (!path.isAbsolute(value)) return;
  const bounded = { ...policy, bounds: policy.bounds.filter((b) => b.rule !== 'local_sources_disabled') };
  const broken = await brokenBound(path.resolve(value), bounded);
  if (broken) throw invalidArgument(field, broken.rule, boundMessage(field, value, broken));
}

// --- git -----------------------------------------------------------------------------------------

/**
 * A git source that passed the policy: a local repository, or a host allowed to be contacted.
 * `url` never carries a credential; an https credential rides beside it, for GIT_ASKPASS only.
 */
export type GitTarget =
  | { transport: 'file'; url: string; path: string }
  | { transport: 'https' | 'ssh'; url: string; host: string; port: number; addresses: string[]; credential?: GitCredential };

const DEFAULT_PORT: Record<'https' | 'ssh', number> = { https: 443, ssh: 22 };

interface HostPattern {
  host: string;
  port: number | undefined;
  wildcard: boolean;
}

function parsePattern(raw: string): HostPattern {
  const p = raw.trim().toLowerCase();
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(p);
  if (v6) return { host: v6[1]!, port: v6[2] ? Number(v6[2]) : undefined, wildcard: false };
  const m = /^([^:]+)(?::(\d+))?$/.exec(p);
  const host = m?.[1] ?? p;
  return { host, port: m?.[2] ? Number(m[2]) : undefined, wildcard: host.includes('*') };
}

function hostMatches(pattern: HostPattern, host: string): boolean {
  if (pattern.host === '*') return true;
  if (pattern.host.startsWith('*.')) return host.endsWith(pattern.host.slice(1)) && host.length > pattern.host.length - 1;
  return pattern.host === host;
}

/**
 * The allowed-hosts entry a host and port match: a pattern without a port matches the scheme's
 * default port only. `explicit` says the host is named exactly (no wildcard).
 */
export function matchAllowedHost(patterns: readonly string[], host: string, port: number, defaultPort: number): { explicit: boolean } | undefined {
  let found: { explicit: boolean } | undefined;
  for (const raw of patterns) {
    const p = parsePattern(raw);
    if (!hostMatches(p, host) || (p.port ?? defaultPort) !== port) continue;
    if (!p.wildcard) return { explicit: true };
    found = { explicit: false };
  }
  return found;
}

const NON_PUBLIC = new net.BlockList();
for (const [net4, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) NON_PUBLIC.addSubnet(net4, prefix, 'ipv4');
for (const [net6, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96]] as const)
  NON_PUBLIC.addSubnet(net6, prefix, 'ipv6');

/** Loopback, link-local, private, shared, multicast or unspecified (IPv4-mapped IPv6 included). */
export function isNonPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return NON_PUBLIC.check(mapped[1]!, 'ipv4');
  const family = net.isIP(address);
  if (family === 0) return true;
  return NON_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** `[user@]host:path` (git's scp-like syntax for ssh), when no scheme is given. */
const SCP_LIKE = /^(?:[^@/:\s]+@)?(\[[^\]/]+\]|[^/:\s]+):(?!\/\/)/;

function parseNetworkUrl(field: string, value: string): { transport: 'https' | 'ssh'; host: string; port: number } {
  const scheme = URL_SCHEME.exec(value)?.[1]?.toLowerCase();
  if (scheme === undefined) {
    const host = SCP_LIKE.exec(value)![1]!.replace(/^\[|\]$/g, '').toLowerCase();
    if (host.startsWith('-')) throw invalidArgument(field, 'git_url', `${field} '${value}' names no valid host`);
    return { transport: 'ssh', host, port: DEFAULT_PORT.ssh };
  }
  if (scheme !== 'https' && scheme !== 'ssh') {
    throw invalidArgument(field, 'git_scheme',
      `${field} '${value}': git sources must use https or ssh (or be a local repository inside the allowed roots); '${scheme}' is refused`);
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidArgument(field, 'git_url', `${field} '${value}' is not a valid URL`);
  }
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === '' || host.startsWith('-')) throw invalidArgument(field, 'git_url', `${field} '${value}' names no valid host`);
  return { transport: scheme, host, port: url.port ? Number(url.port) : DEFAULT_PORT[scheme] };
}

/** Resolve the host's addresses now and refuse non-public ones unless the host is listed exactly. */
async function checkAddresses(field: string, value: string, host: string, explicit: boolean): Promise<string[]> {
  let addresses: string[];
  if (net.isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch (e) {
      throw invalidArgument(field, 'git_host_resolves',
        `${field} '${value}': host '${host}' does not resolve (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
    }
  }
  const bad = addresses.filter(isNonPublicAddress);
  if (bad.length > 0 && !explicit) {
    throw invalidArgument(field, 'git_private_address',
      `${field} '${value}': host '${host}' resolves to a loopback, link-local or private address (${
        bad.join(', ')
      }); list it exactly in MEMPALACE_GIT_ALLOWED_HOSTS to allow it`);
  }
  return addresses;
}

/**
 * Check a git source URL against the policy; local repositories come back as canonical file URLs.
 * A credential written into the URL is split off (and never echoed in a message): it comes back
 * beside the URL, which the entry points keep apart in the credential store.
 */
export async function resolveGitSource(field: string, value: string, policy: SourcePolicy): Promise<GitTarget> {
  const trimmed = value.trim();
  if (trimmed === '') throw invalidArgument(field, 'non_empty_string', `${field} must be a non-empty string`);
  if (trimmed.startsWith('-') || /[\s\0]/.test(trimmed))
    throw invalidArgument(field, 'git_url', `${field} is not a git URL (no leading '-', no whitespace or control characters)`);
  const { url: given, credential } = splitUrlCredential(field, trimmed);
  if (TRANSPORT_FORM.test(given)) {
    throw invalidArgument(field, 'git_scheme', `${field} '${given}': git remote helpers ('transport::address', such as ext::) are refused; use https or ssh`);
  }
  const scheme = URL_SCHEME.exec(given)?.[1]?.toLowerCase();
  if (scheme === 'file' || (scheme === undefined && !SCP_LIKE.test(given))) {
    const dir = await resolveLocalSource(field, given, policy);
    for (const alternates of [path.join(dir, '.git', 'objects', 'info', 'alternates'), path.join(dir, 'objects', 'info', 'alternates')]) {
      if (await fs.lstat(alternates).then(() => true, () => false)) {
        throw invalidArgument(field, 'git_alternates',
          `${field} '${given}' borrows objects from another repository (objects/info/alternates), which may lie outside the allowed roots`);
      }
    }
    return { transport: 'file', url: `file://${dir}`, path: dir };
  }
  const { transport, host, port } = parseNetworkUrl(field, given);
  if (policy.gitAllowedHosts.length === 0) {
    throw invalidArgument(field, 'git_allowed_hosts', `${field} '${given}': network git sources are disabled; list the host in MEMPALACE_GIT_ALLOWED_HOSTS`);
  }
  const match = matchAllowedHost(policy.gitAllowedHosts, host, port, DEFAULT_PORT[transport]);
  if (!match) {
    throw invalidArgument(field, 'git_allowed_hosts',
      `${field} '${given}': host '${host}:${port}' is not in MEMPALACE_GIT_ALLOWED_HOSTS (${policy.gitAllowedHosts.join(', ')})`);
  }
  const addresses = await checkAddresses(field, given, host, match.explicit);
  return { transport, url: given, host, port, addresses, ...(credential && transport === 'https' ? { credential } : {}) };
}

const GIT_REF = /^[0-9A-Za-z][\w./-]*$/;

export function assertGitRef(field: string, ref: string): void {
  if (!GIT_REF.test(ref) || ref.includes('..') || ref.endsWith('.lock') || ref.endsWith('/'))
    throw invalidArgument(field, 'git_ref', `${field} '${ref}' is not a valid git ref`);
}

/**
 * A mine's source from what a caller typed: a git repository when a ref is given, else a
 * directory (or, with `allowFile`, one file). Both are checked against the policy here, at the
 * entry point, and again by the scan activity on the worker.
 */
export async function resolveMineSource(input: { source: string; ref?: string | undefined; allowFile: boolean }, policy: SourcePolicy): Promise<SourceSpec> {
  if (input.ref !== undefined && input.ref.trim() !== '') {
    const ref = input.ref.trim();
    assertGitRef('ref', ref);
    const target = await resolveGitSource('source', input.source, policy);
    return { kind: 'git', url: target.url, ref };
  }
  return { kind: 'dir', path: await resolveLocalSource('source', input.source, policy, { allowFile: input.allowFile }) };
}
