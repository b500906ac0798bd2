/**
 * The MCP server: the SDK's low-level `Server` with our own `tools/list` and `tools/call`
 * handlers driven by the registry (so gates can answer with the JSON-RPC errors of mcp-tools
 * §10), plus resources (taxonomy, protocol, AAAK spec, drawers, job progress) and client roots.
 *
 * `PalaceMcp` holds what outlives one connection (the runtime, the gates' state); `createServer`
 * makes one SDK server over it — one for a stdio session, one per request over stateless HTTP.
 * Around it: envelope.ts checks every incoming message (both transports), line-transport.ts reads
 * stdio, http.ts serves `/mcp`, results.ts wraps outcomes and tool errors, progress.ts relays job
 * progress.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  RootsListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Runtime } from '../cli/runtime.js';
import { PalaceError, isPalaceError } from '../core/errors.js';
import { AAAK_SPEC, PALACE_PROTOCOL } from '../core/protocol.js';
import { getDrawer } from '../palace/drawers.js';
import type { JobProgress } from '../palace/jobs.js';
import type { PeerEntry } from '../palace/logstream-estate.js';
import { taxonomy } from '../palace/status.js';
import { mempalaceHome } from '../palace/system.js';
import type { IntegrityProbe, WatchedPackage } from './guards.js';
import { IntegrityMonitor, LibraryWatcher, decorateStatus, identityRefusal, readOnlyRefusal } from './guards.js';
import { ServerWatchdogs, WRITE_STALL_EXIT_CODE } from './watchdogs.js';
import { RuntimeGate } from './runtime-gate.js';
import { progressView } from './jobs.js';
import { progressRelay } from './progress.js';
import type { RegisteredTool } from './registry.js';
import { TOOLS, TOOLS_BY_NAME, validationError } from './registry.js';
import { toolError, toolFailure, wrapResult } from './results.js';
import type { Caller, ToolContext } from './types.js';

export interface PalaceMcpOptions {
  /** Read-only mode (`--read-only`); defaults to MEMPALACE_MCP_READ_ONLY from the config. */
  readOnly?: boolean;
  /** The MemPalace home for hook settings and the save hook's record (default ~/.mempalace). */
  home?: string;
  /** Packages the stale-library gate watches (default: this package, plus better-sqlite3 in the embedded profile). */
  watchedPackages?: WatchedPackage[];
  /** The palace database's integrity check; without one the payload reports `checked: false`. */
  integrityProbe?: IntegrityProbe;
  /** Configured mesh peers for mempalace_mesh_peers. */
  peers?: () => Promise<PeerEntry[]>;
  /** Reopen the stores for mempalace_reconnect (the composition root knows how). */
  reopen?: () => Promise<Runtime>;
  /** Diagnostics sink; defaults to stderr (stdout belongs to the protocol on stdio). */
  log?: (line: string) => void;
  /** What the idle and write-stall timers do when they fire (default: exit the process). */
  onIdle?: () => void;
  onWriteStall?: () => void;
}

const RESOURCE_TAXONOMY = 'mempalace://taxonomy';
const RESOURCE_PROTOCOL = 'mempalace://protocol';
const RESOURCE_AAAK = 'mempalace://aaak-spec';
const DRAWER_PREFIX = 'mempalace://drawer/';
const JOB_PREFIX = 'mempalace://job/';

/** This package's package.json: the first one named "mempalace" above this module. */
export function ownPackageJson(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'package.json');
    try {
      if ((JSON.parse(fs.readFileSync(candidate, 'utf8')) as { name?: unknown }).name === 'mempalace') return candidate;
    } catch {
      // Not here; keep walking up.
    }
    const parent = path.dirname(dir);
    if (parent === dir) return path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'package.json');
    dir = parent;
  }
}

function defaultWatched(profile: string): WatchedPackage[] {
  const watched: WatchedPackage[] = [{ name: 'mempalace', packageJson: ownPackageJson() }];
  if (profile === 'embedded') {
    try {
      watched.push({ name: 'better-sqlite3', packageJson: createRequire(import.meta.url).resolve('better-sqlite3/package.json') });
    } catch {
      // Not resolvable: the gate reports it under `unreadable` through a missing baseline.
      watched.push({ name: 'better-sqlite3', packageJson: path.join('node_modules', 'better-sqlite3', 'package.json') });
    }
  }
  return watched;
}

function readVersion(file: string): string {
  try {
    return String((JSON.parse(fs.readFileSync(file, 'utf8')) as { version?: unknown }).version ?? '0.0.0');
  } catch {
    return '0.0.0';
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function quoteList(keys: string[]): string {
  return keys.map((k) => `'${k}'`).join(', ');
}

const INTEGER_TEXT = /^\s*[+-]?\d+\s*$/;
const NUMBER_TEXT = /^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$/;

/** mcp-tools §9.4: integers truncate or parse; numbers parse; other types pass through. */
function coerce(tool: RegisteredTool, args: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(args)) {
    const type = tool.propertyTypes.get(key);
    const invalid = () => new McpError(ErrorCode.InvalidParams, `Invalid value for parameter '${key}'`);
    if (type === 'integer') {
      if (typeof value === 'number' && Number.isFinite(value)) args[key] = Math.trunc(value);
      else if (typeof value === 'string' && INTEGER_TEXT.test(value)) args[key] = Number.parseInt(value.trim(), 10);
      else throw invalid();
    } else if (type === 'number') {
      if (typeof value === 'number' && Number.isFinite(value)) continue;
      if (typeof value === 'string' && NUMBER_TEXT.test(value)) args[key] = Number(value.trim());
      else throw invalid();
    } else if (value === null && !tool.required.includes(key)) {
      // null means "absent" for every optional non-numeric parameter (§0.2).
      delete args[key];
    }
  }
}

export interface CallContext {
  caller: Caller | undefined;
  signal: AbortSignal;
  onJobProgress: ((p: JobProgress) => void) | undefined;
  clientRoots(): Promise<string[] | undefined>;
}

export class PalaceMcp {
  runtime: Runtime;
  readonly readOnly: boolean;
  readonly version: string;
  readonly integrity: IntegrityMonitor;
  readonly library: LibraryWatcher;
  private readonly home: string;
  readonly log: (line: string) => void;
  readonly watchdogs: ServerWatchdogs;
  /** Requests in flight on `runtime`; reconnect drains it before closing the stores. */
  readonly gate = new RuntimeGate();

  constructor(runtime: Runtime, private readonly opts: PalaceMcpOptions = {}) {
    this.runtime = runtime;
    this.log = opts.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.readOnly = opts.readOnly ?? runtime.config.mcp.readOnly;
    this.home = opts.home ?? mempalaceHome();
    const watched = opts.watchedPackages ?? defaultWatched(runtime.config.profile);
    this.version = readVersion(watched.find((w) => w.name === 'mempalace')?.packageJson ?? ownPackageJson());
    this.library = new LibraryWatcher(watched, runtime.config.mcp.allowStaleLibrary, this.log);
    const probe = opts.integrityProbe ?? storeIntegrityProbe(runtime);
    this.integrity = new IntegrityMonitor(runtime.stores.palace, probe);
    const { idleHours, writeStallWarnSeconds, writeStallExitSeconds } = runtime.config.mcp;
    this.watchdogs = new ServerWatchdogs({
      idleHours, writeStallWarnSeconds, writeStallExitSeconds, log: this.log,
      onIdle: opts.onIdle ?? (() => process.exit(0)),
      onWriteStall: opts.onWriteStall ?? (() => process.exit(WRITE_STALL_EXIT_CODE)),
    });
  }

  /** Start the background probes (never on the protocol path, so `initialize` is not delayed). */
  start(): void {
    void this.integrity.run().then((p) => {
      if (p.checked && p.ok === false) this.log(`mempalace mcp: palace integrity check failed (${p.error_count} errors); refusing tools outside the integrity-safe set`);
    });
  }

  listTools(): Tool[] {
    return TOOLS.filter((t) => !(this.readOnly && t.guards.R)).map((t) => ({
      name: t.name,
      title: t.annotations.title,
      description: t.description,
      inputSchema: t.inputSchema as Tool['inputSchema'],
      outputSchema: t.outputSchema as Tool['outputSchema'],
      annotations: t.annotations,
    }));
  }

  /** The tools/call pipeline of mcp-tools §9.3. */
  async callTool(name: string, rawArgs: Record<string, unknown> | undefined, cctx: CallContext): Promise<CallToolResult> {
    this.watchdogs.request();
    const tool = TOOLS_BY_NAME.get(name);
    // MCP's tools page answers an unknown tool with -32602 (issue 15; mcp-tools §9.3 said -32601).
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const args: Record<string, unknown> = { ...(rawArgs ?? {}) };
    delete args.wait_for_previous;
    const unknown = Object.keys(args).filter((k) => !tool.propertyTypes.has(k));
    if (unknown.length > 0) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown parameter${unknown.length > 1 ? 's' : ''} ${quoteList(unknown)} for tool ${name}`);
    }
    coerce(tool, args);
    const refusal = readOnlyRefusal(tool, this.readOnly) ?? this.integrity.refusal(tool) ?? this.library.refusal(tool);
    if (refusal) throw refusal;
    const required = [...tool.required];
    if (name === 'mempalace_diary_write') {
      if (args.entry === undefined && args.content !== undefined) args.entry = args.content;
      required.push('entry');
    }
    const missing = required.filter((k) => !(k in args));
    if (missing.length > 0) {
      throw new McpError(ErrorCode.InvalidParams, `Missing required parameter${missing.length > 1 ? 's' : ''} ${quoteList(missing)} for tool ${name}`);
    }
    if (!tool.validate(args)) {
      return wrapResult(toolFailure(tool, validationError(tool, tool.validate.errors![0]!)));
    }
    const identity = identityRefusal(tool, args, cctx.caller);
    if (identity) return toolError(tool, identity);
    if (cctx.caller && !cctx.caller.scopes.includes('admin')) {
      // An HTTP write that names no agent is written under the token's identity.
      for (const field of tool.agentFields ?? []) if (!field.includes('.') && !(field in args)) args[field] = cctx.caller.identity;
    }

    // Reconnect drains the gate itself; every other call holds it while it uses the runtime.
    const ticket = name === 'mempalace_reconnect' ? undefined : await this.gate.enter();
    const ctx: ToolContext = {
      runtime: this.runtime,
      home: this.home,
      caller: cctx.caller,
      signal: ticket ? AbortSignal.any([cctx.signal, ticket.signal]) : cctx.signal,
      onJobProgress: cctx.onJobProgress,
      clientRoots: cctx.clientRoots,
      peers: this.opts.peers,
      reconnect: () => this.reconnect(),
    };
    let result: unknown;
    try {
      result = tool.guards.V ? await this.watchdogs.guardWrite(name, () => tool.handler(args, ctx)) : await tool.handler(args, ctx);
    } catch (e) {
      const failure = toolFailure(tool, e);
      if (failure) return wrapResult(failure);
      const errorClass = isPalaceError(e) && e.details?.error_class ? String(e.details.error_class) : e instanceof Error ? e.constructor.name : typeof e;
      const message = e instanceof Error ? e.message : String(e);
      if (!(isPalaceError(e) && e.details?.error_class === 'ValueError')) this.log(`mempalace mcp: ${name} failed: ${e instanceof Error ? e.stack ?? message : message}`);
      throw new McpError(-32000, 'Internal tool error', { error_class: errorClass, message });
    } finally {
      ticket?.leave();
    }
    if (name === 'mempalace_status' && isObject(result)) {
      result = decorateStatus(result, {
        sqlite_integrity: this.integrity.current(),
        library_versions: this.library.payload(),
        updates: { server: { enabled: false, installed: this.version } },
      });
    }
    return wrapResult(result);
  }

  async reconnect(): Promise<Record<string, unknown>> {
    try {
      const reopen = this.opts.reopen;
      if (reopen) {
        // No request is in flight on the old stores when they close; new ones wait, then use the new.
        await this.gate.exclusive(async () => {
          const previous = this.runtime;
          this.runtime = await reopen();
          await previous.close();
        });
      }
      const integrity = await this.integrity.run();
      if (integrity.checked && integrity.ok === false) {
        return {
          success: false, message: 'SQLite integrity check failed after reconnect', sqlite_integrity: integrity,
          vector_disabled: false, vector_disabled_reason: '',
          hint: 'Stop all clients and writers, back up the palace directory, repair it offline, then reconnect.',
        };
      }
      const drawers = await this.runtime.stores.drawers.count();
      return { success: true, message: 'Reconnected to palace', drawers, vector_disabled: false, vector_disabled_reason: '' };
    } catch (e) {
      return { success: false, message: e instanceof Error ? e.message : String(e), drawers: 0, vector_disabled: false, error: e instanceof Error ? e.message : String(e) };
    }
  }

  // --- resources ---------------------------------------------------------------------------------

  async listResources() {
    const jobs = await this.runtime.jobs.list(20).catch(() => [] as JobProgress[]);
    return {
      resources: [
        { uri: RESOURCE_TAXONOMY, name: 'taxonomy', title: 'Palace taxonomy', description: 'Wing → room → drawer count.', mimeType: 'application/json' },
        { uri: RESOURCE_PROTOCOL, name: 'protocol', title: 'Memory protocol', description: 'When to read and write the palace.', mimeType: 'text/plain' },
        { uri: RESOURCE_AAAK, name: 'aaak-spec', title: 'AAAK dialect', description: 'The compact note format for diary entries.', mimeType: 'text/plain' },
        ...jobs.map((j) => ({ uri: `${JOB_PREFIX}${j.job_id}`, name: `job-${j.job_id}`, title: `${j.kind} job (${j.state})`, mimeType: 'application/json' })),
      ],
    };
  }

  listResourceTemplates() {
    return {
      resourceTemplates: [
        { uriTemplate: `${DRAWER_PREFIX}{drawer_id}`, name: 'drawer', title: 'Drawer', description: 'One drawer with its full content and metadata.', mimeType: 'application/json' },
        { uriTemplate: `${JOB_PREFIX}{job_id}`, name: 'job', title: 'Job progress', description: 'Progress of a mine, sync or delete_by_source job.', mimeType: 'application/json' },
      ],
    };
  }

  async readResource(uri: string) {
    const json = (value: unknown) => ({ contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(value, null, 2) }] });
    const text = (value: string) => ({ contents: [{ uri, mimeType: 'text/plain', text: value }] });
    if (uri === RESOURCE_TAXONOMY) return json({ taxonomy: await taxonomy(this.runtime.stores.drawers) });
    if (uri === RESOURCE_PROTOCOL) return text(PALACE_PROTOCOL);
    if (uri === RESOURCE_AAAK) return text(AAAK_SPEC);
    try {
      if (uri.startsWith(DRAWER_PREFIX)) return json(await getDrawer(this.runtime.drawerContext, { drawer_id: decodeURIComponent(uri.slice(DRAWER_PREFIX.length)) }));
      if (uri.startsWith(JOB_PREFIX)) return json(progressWithResult(await this.runtime.jobs.progress(decodeURIComponent(uri.slice(JOB_PREFIX.length)))));
    } catch (e) {
      if (isPalaceError(e) && e.code === 'not_found') throw new McpError(-32002, `Resource not found: ${uri}`, { uri });
      throw e;
    }
    throw new McpError(-32002, `Resource not found: ${uri}`, { uri });
  }

  /** One SDK server over this state: one per stdio session, or one per stateless HTTP request. */
  createServer(caller?: Caller): Server {
    const server = new Server(
      { name: 'mempalace', version: this.version },
      {
        capabilities: { tools: { listChanged: false }, resources: {} },
        instructions: 'MemPalace is your long-term memory. Call mempalace_status on wake-up: it returns the memory protocol to follow and the AAAK note dialect.',
      },
    );
    let roots: string[] | undefined;
    let rootsKnown = false;
    // Roots fail closed: a client that declares the capability bounds its sources by the list it
    // gives (an empty list allows none); a failing roots/list refuses the call.
    const clientRoots = async (): Promise<string[] | undefined> => {
      if (rootsKnown) return roots;
      if (!server.getClientCapabilities()?.roots) return undefined;
      try {
        const listed = await server.listRoots(undefined, { timeout: 5000 });
        roots = listed.roots.filter((r) => r.uri.startsWith('file://')).map((r) => path.resolve(fileURLToPath(r.uri)));
        rootsKnown = true;
        return roots;
      } catch (e) {
        const reason = e instanceof Error ? e.message : String(e);
        this.log(`mempalace mcp: could not list the client's roots: ${reason}`);
        throw new PalaceError('permission_denied', `the client declares roots but roots/list failed (${reason}); no source can be checked against them, so the call is refused`, { rule: 'client_roots' });
      }
    };
    server.setNotificationHandler(RootsListChangedNotificationSchema, async () => {
      rootsKnown = false;
    });
    server.setRequestHandler(ListToolsRequestSchema, async (request) => {
      refuseCursor(request.params?.cursor);
      return { tools: this.listTools() };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const token = request.params._meta?.progressToken;
      const onJobProgress = token === undefined ? undefined : progressRelay(token, (n) => extra.sendNotification(n));
      return this.callTool(request.params.name, request.params.arguments, { caller, signal: extra.signal, onJobProgress, clientRoots });
    });
    server.setRequestHandler(ListResourcesRequestSchema, async (request) => {
      refuseCursor(request.params?.cursor);
      return this.listResources();
    });
    server.setRequestHandler(ListResourceTemplatesRequestSchema, async (request) => {
      refuseCursor(request.params?.cursor);
      return this.listResourceTemplates();
    });
    server.setRequestHandler(ReadResourceRequestSchema, async (request) => this.readResource(request.params.uri));
    return server;
  }
}

/** The lists fit in one page, so no cursor this server handed out exists. */
function refuseCursor(cursor: string | undefined): void {
  if (cursor !== undefined) throw new McpError(ErrorCode.InvalidParams, `Invalid params: unknown cursor '${cursor}' (this list has a single page)`);
}

/** A job resource shows the whole progress record, with the result once finished. */
function progressWithResult(p: JobProgress): Record<string, unknown> {
  return p.result === undefined ? progressView(p) : { ...progressView(p), result: p.result };
}

/** Use the drawer store's own integrity check when its adapter offers one. */
function storeIntegrityProbe(runtime: Runtime): IntegrityProbe | undefined {
  const store = runtime.stores.drawers as unknown as { integrityCheck?: () => Promise<{ sqlite_path: string; errors: string[] }> };
  return typeof store.integrityCheck === 'function' ? () => store.integrityCheck!() : undefined;
}
