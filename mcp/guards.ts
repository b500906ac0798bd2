/**
 * The gates of docs/tools.md §11 and the checks around them: read-only mode (-32003), the integrity
 * gate (-32002), the stale-library gate (-32005), the identity rule for HTTP callers (docs/decisions.md
 * "Identity"), and the `status` decorations (docs/tools.md §12).
 */
import fs from 'node:fs';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { grants, toolScope } from '../core/scopes.js';
import type { Caller } from '../core/caller.js';
import { sameAgent } from '../core/agent-identity.js';
import type { Logger } from '../core/log.js';
import type { ToolDef } from './types.js';

export const READ_ONLY = -32003;
export const INTEGRITY_FAILED = -32002;
export const STALE_LIBRARY = -32005;
export const STALE_OVERRIDE_ENV = 'MEMPALACE_MCP_ALLOW_STALE_LIBRARY';

// --- read-only ---------------------------------------------------------------------------------

export function readOnlyRefusal(tool: ToolDef, readOnly: boolean): McpError | undefined {
  if (!readOnly || !tool.guards.readOnlyRefused) return undefined;
  return new McpError(READ_ONLY, 'Server is in read-only mode; this tool is disabled', { tool: tool.name });
}

// --- integrity ---------------------------------------------------------------------------------

export interface IntegrityPayload {
  checked: boolean;
  ok: boolean | null;
  palace: string;
  sqlite_path: string;
  error_count: number;
  errors: string[];
  truncated?: number;
  check_error?: string;
  reason?: string;
}

/** A read-only integrity check of the palace database, offered by a store that has one. */
export type IntegrityProbe = () => Promise<{ sqlite_path: string; errors: string[] }>;

const MAX_REPORTED = 10;

/**
 * Holds the last integrity reading. Without a probe the check does not apply, and the payload
 * says so (`checked: false` with the reason) rather than claiming a clean result.
 */
export class IntegrityMonitor {
  private payload: IntegrityPayload;

  constructor(private readonly palace: string, private readonly probe: IntegrityProbe | undefined) {
    this.payload = probe
      ? { checked: false, ok: null, palace, sqlite_path: '', error_count: 0, errors: [], reason: 'integrity check has not finished yet' }
      : { checked: false, ok: null, palace, sqlite_path: '', error_count: 0, errors: [],
        reason: 'the drawer store offers no integrity check through its port' };
  }

  current(): IntegrityPayload {
    return this.payload;
  }

  failed(): boolean {
    return this.payload.checked && this.payload.ok === false;
  }

  async run(): Promise<IntegrityPayload> {
    if (!this.probe) return this.payload;
    try {
      const { sqlite_path, errors } = await this.probe();
      this.payload = {
        checked: true,
        ok: errors.length === 0,
        palace: this.palace,
        sqlite_path,
        error_count: errors.length,
        errors: errors.slice(0, MAX_REPORTED),
        ...(errors.length > MAX_REPORTED ? { truncated: errors.length - MAX_REPORTED } : {}),
      };
    } catch (e) {
      // A check that could not run is not a failed palace: report it, refuse nothing.
      this.payload = { checked: false, ok: null, palace: this.palace, sqlite_path: '', error_count: 0, errors: [],
        check_error: e instanceof Error ? e.message : String(e) };
    }
    return this.payload;
  }

  refusal(tool: ToolDef): McpError | undefined {
    if (tool.guards.integritySafe || !this.failed()) return undefined;
    const p = this.payload;
    return new McpError(INTEGRITY_FAILED, 'Palace SQLite integrity check failed; refusing tool call until the palace is repaired', {
      tool: tool.name,
      palace: p.palace,
      sqlite_path: p.sqlite_path,
      errors: p.errors,
      error_count: p.error_count,
      hint: 'Stop all clients and writers, back up the palace directory, repair it offline, then call mempalace_reconnect or restart the server.',
    });
  }
}

// --- stale library -----------------------------------------------------------------------------

export interface WatchedPackage {
  /** Package name as reported. */
  name: string;
  /** The package.json of the installed copy the running server was loaded from. */
  packageJson: string;
}

export interface LibraryVersionsPayload {
  stale: boolean;
  serving: Record<string, string>;
  packages: { package: string; serving: string; installed: string }[];
  unreadable?: Record<string, string>;
  gate_disabled_by?: typeof STALE_OVERRIDE_ENV;
}

type Reading = { version: string } | { unreadable: string };

const NOT_INSTALLED = 'not installed';
const SEMVER = /^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?$/;

function readVersion(file: string): Reading {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { version: NOT_INSTALLED };
    return { unreadable: `cannot read ${file}: ${(e as Error).message}` };
  }
  try {
    const version = (JSON.parse(text) as { version?: unknown }).version;
    if (typeof version !== 'string' || !SEMVER.test(version)) return { unreadable: `malformed version in ${file}` };
    return { version };
  } catch (e) {
    return { unreadable: `malformed ${file}: ${(e as Error).message}` };
  }
}

/** The version a package.json names, or undefined when it is missing, unreadable or malformed. */
export function installedVersion(file: string): string | undefined {
  const reading = readVersion(file);
  return 'version' in reading && reading.version !== NOT_INSTALLED ? reading.version : undefined;
}

/**
 * Records the installed versions of the watched packages at startup and re-reads them before
 * each mutating call, through a stat fingerprint cache so an unchanged file is never re-parsed.
 * Nothing latches: a rollback to the startup version clears the condition.
 */
export class LibraryWatcher {
  private readonly baseline = new Map<string, Reading>();
  private readonly cache = new Map<string, { fingerprint: string; reading: Reading }>();
  private readonly logged = new Set<string>();

  constructor(private readonly watched: WatchedPackage[], private readonly allowStale: boolean, private readonly log: Logger) {
    for (const w of watched) this.baseline.set(w.name, this.read(w));
  }

  private read(w: WatchedPackage): Reading {
    let fingerprint: string;
    try {
      const st = fs.statSync(w.packageJson, { bigint: true });
      fingerprint = `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
    } catch {
      fingerprint = 'missing';
    }
    const hit = this.cache.get(w.packageJson);
    if (hit && hit.fingerprint === fingerprint) return hit.reading;
    const reading = fingerprint === 'missing' ? { version: NOT_INSTALLED } : readVersion(w.packageJson);
    this.cache.set(w.packageJson, { fingerprint, reading });
    return reading;
  }

  payload(): LibraryVersionsPayload {
    const serving: Record<string, string> = {};
    const packages: LibraryVersionsPayload['packages'] = [];
    const unreadable: Record<string, string> = {};
    for (const w of this.watched) {
      const base = this.baseline.get(w.name)!;
      if ('unreadable' in base) {
        unreadable[w.name] = `no baseline at startup: ${base.unreadable}`;
        continue;
      }
      serving[w.name] = base.version;
      const now = this.read(w);
      if ('unreadable' in now) {
        unreadable[w.name] = now.unreadable;
        continue;
      }
      if (now.version !== base.version) packages.push({ package: w.name, serving: base.version, installed: now.version });
    }
    const stale = packages.length > 0;
    return {
      stale,
      serving,
      packages,
      ...(Object.keys(unreadable).length > 0 ? { unreadable } : {}),
      ...(stale && this.allowStale ? { gate_disabled_by: STALE_OVERRIDE_ENV } : {}),
    };
  }

  refusal(tool: ToolDef): McpError | undefined {
    if (!tool.guards.mutating) return undefined;
    const p = this.payload();
    if (!p.stale || this.allowStale) return undefined;
    const drift = p.packages.map((d) => `${d.package} ${d.serving} -> ${d.installed}`).join(', ');
    if (!this.logged.has(drift)) {
      this.logged.add(drift);
      this.log.warn(`mempalace mcp: refusing writes, the installed library changed under the running server (${drift}); restart the server`);
    }
    return new McpError(STALE_LIBRARY, `Server is running a library version that is no longer installed (${drift}); refusing writes until it is restarted`, {
      tool: tool.name,
      packages: p.packages,
      action_required: 'restart_mcp_server',
      override_env: STALE_OVERRIDE_ENV,
      hint:
        `The package was upgraded after this server started. Restart the MCP server (reconnect cannot reload code), or set ${STALE_OVERRIDE_ENV}=1 before starting it to allow writes across upgrades.`,
    });
  }
}

// --- identity ----------------------------------------------------------------------------------

function valueAt(args: Record<string, unknown>, dotted: string): unknown {
  let v: unknown = args;
  for (const key of dotted.split('.')) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/**
 * docs/decisions.md "Identity": over HTTP a tool needs the scope its row in core/scopes.ts names, and a
 * write naming an agent must name the token's identity unless the token has admin scope. Returns the refusal message, or undefined when the call may proceed.
 */
export function identityRefusal(tool: ToolDef, args: Record<string, unknown>, caller: Caller | undefined): string | undefined {
  if (!caller) return undefined;
  const needed = toolScope(tool.name);
  if (needed === undefined) return `${tool.name} has no row in the scope table; refused`;
  if (!grants(caller.scopes, needed)) return `this token has no ${needed} scope; ${tool.name} needs it`;
  if (caller.scopes.includes('admin')) return undefined;
  for (const field of tool.agentFields ?? []) {
    const value = valueAt(args, field);
    if (value === undefined || value === null) continue;
    if (typeof value === 'string' && sameAgent(value, caller.identity)) continue;
    return `${field} must be this token's identity '${caller.identity}' (an admin token may write for others)`;
  }
  return undefined;
}

// --- status decorations (docs/tools.md §12) ------------------------------------------------------------------

export interface UpdateStatus {
  enabled: false;
  installed: string;
}

export function decorateStatus(result: Record<string, unknown>,
  extra: { sqlite_integrity: IntegrityPayload; library_versions: LibraryVersionsPayload; updates: { server: UpdateStatus } }): Record<string, unknown> {
  const out = { ...result };
  for (const [key, value] of Object.entries(extra)) if (!(key in out)) out[key] = value;
  if (extra.sqlite_integrity.checked && extra.sqlite_integrity.ok === false && !('sqlite_integrity_failed' in out)) {
    Object.assign(out, { sqlite_integrity_failed: true, error: 'SQLite integrity check failed', partial: true });
  }
  return out;
}
