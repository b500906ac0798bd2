/**
 * The MCP server's state and its `tools/call` pipeline (docs/tools.md §9.3): the registry drives
 * `tools/list` and `tools/call`, so gates can answer with the JSON-RPC errors of docs/tools.md §10.
 *
 * `PalaceMcp` holds what outlives one connection (the runtime, the gates' state);
 * `createServer` makes one SDK server over it (sdk-server.ts) — one for a stdio session, one per
 * request over stateless HTTP. Around it: arguments.ts checks and coerces arguments, resources.ts
 * serves the resources, packages.ts finds the watched packages, envelope.ts checks every incoming
 * message (both transports), line-transport.ts reads stdio, http.ts serves `/mcp`, results.ts
 * wraps outcomes and tool errors, progress.ts relays job progress.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { randomUUID } from 'node:crypto';
import type { Caller } from '../core/caller.js';
import type { Call } from '../palace/call.js';
import { isPalaceError } from '../core/errors.js';
import { toolCallSpan } from '../core/tracing.js';
import type { Runtime } from '../palace/runtime.js';
import { coercedArguments, requireArguments } from './arguments.js';
import { mempalaceHome } from '../palace/system/system.js';
import type { IntegrityProbe, WatchedPackage } from './guards.js';
import { IntegrityMonitor, LibraryWatcher, decorateStatus, identityRefusal, installedVersion, readOnlyRefusal } from './guards.js';
import { defaultWatched, ownPackageJson } from './packages.js';
import { ServerWatchdogs, WRITE_STALL_EXIT_CODE } from './watchdogs.js';
import { RuntimeGate } from './runtime-gate.js';
import { TOOLS, TOOLS_BY_NAME, validationError } from './registry.js';
import { toolError, toolFailure, wrapResult } from './results.js';
import { createSdkServer } from './sdk-server.js';
import type { CallContext, McpService, ToolContext } from './types.js';
import type { ReconnectResult } from '../palace/operation-call.js';
import type { Logger } from '../core/log.js';

export interface PalaceMcpOptions {
  /** Read-only mode (`--read-only`); defaults to MEMPALACE_MCP_READ_ONLY from the config. */
  readOnly?: boolean;
  /** The MemPalace home for hook settings and the save hook's record (default ~/.mempalace). */
  home?: string;
  /** Packages the stale-library gate watches (default: this package, plus better-sqlite3 in the embedded profile). */
  watchedPackages?: WatchedPackage[];
  /** The palace database's integrity check; without one the payload reports `checked: false`. */
  integrityProbe?: IntegrityProbe;
  /** Reopen the stores for mempalace_reconnect (the composition root knows how). */
  reopen?: () => Promise<Runtime>;
  /** Diagnostics; defaults to the runtime's logger (stderr: stdout belongs to the protocol on stdio). */
  log?: Logger;
  /** What the idle and write-stall timers do when they fire (default: exit the process). */
  onIdle?: () => void;
  onWriteStall?: () => void;
}

export class PalaceMcp implements McpService {
  runtime: Runtime;
  readonly readOnly: boolean;
  readonly version: string;
  readonly integrity: IntegrityMonitor;
  readonly library: LibraryWatcher;
  private readonly home: string;
  readonly log: Logger;
  readonly watchdogs: ServerWatchdogs;
  /** Requests in flight on `runtime`; reconnect drains it before closing the stores. */
  readonly gate = new RuntimeGate();

  constructor(runtime: Runtime, private readonly opts: PalaceMcpOptions = {}) {
    this.runtime = runtime;
    this.log = opts.log ?? runtime.log;
    this.readOnly = opts.readOnly ?? runtime.config.mcp.readOnly;
    this.home = opts.home ?? mempalaceHome();
    const watched = opts.watchedPackages ?? defaultWatched(runtime.config.profile);
    this.version = installedVersion(watched.find((w) => w.name === 'mempalace')?.packageJson ?? ownPackageJson()) ?? '0.0.0';
    this.library = new LibraryWatcher(watched, runtime.config.mcp.allowStaleLibrary, this.log);
    this.integrity = new IntegrityMonitor(runtime.stores.palace, opts.integrityProbe);
    const { idleHours, writeStallWarnSeconds, writeStallExitSeconds } = runtime.config.mcp;
    this.watchdogs = new ServerWatchdogs({
      idleHours,
      writeStallWarnSeconds,
      writeStallExitSeconds,
      log: this.log,
      onIdle: opts.onIdle ?? (() => process.exit(0)),
      onWriteStall: opts.onWriteStall ?? (() => process.exit(WRITE_STALL_EXIT_CODE)),
    });
  }

  /** Start the background probes (never on the protocol path, so `initialize` is not delayed). */
  start(): void {
    void this.integrity.run().then((p) => {
      if (p.checked && p.ok === false)
        this.log.error(`mempalace mcp: palace integrity check failed (${p.error_count} errors); refusing tools outside the integrity-safe set`);
    });
  }

  listTools(): Tool[] {
    return TOOLS.filter((t) => !(this.readOnly && t.guards.readOnlyRefused)).map((t) => ({
      name: t.name,
      title: t.annotations.title,
      description: t.description,
      inputSchema: t.inputSchema as Tool['inputSchema'],
      outputSchema: t.outputSchema as Tool['outputSchema'],
      annotations: t.annotations,
    }));
  }

  /** The tools/call pipeline of docs/tools.md §9.3. */
  async callTool(name: string, rawArgs: Record<string, unknown> | undefined, cctx: CallContext): Promise<CallToolResult> {
    this.watchdogs.request();
    const tool = TOOLS_BY_NAME.get(name);
    // MCP's tools page answers an unknown tool with -32602 (issue 15; docs/tools.md §9.3 said -32601).
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const args = coercedArguments(tool, rawArgs);
    const refusal = readOnlyRefusal(tool, this.readOnly) ?? this.integrity.refusal(tool) ?? this.library.refusal(tool);
    if (refusal) throw refusal;
    requireArguments(tool, args);
    if (!tool.validate(args)) {
      const refused = validationError(tool, tool.validate.errors![0]!);
      cctx.onToolFailure?.(refused);
      return wrapResult(toolFailure(tool, refused));
    }
    const identity = identityRefusal(tool, args, cctx.caller);
    if (identity) return toolError(tool, identity);
    if (cctx.caller && !cctx.caller.scopes.includes('admin')) {
      // An HTTP write that names no agent is written under the token's identity.
      for (const field of tool.agentFields ?? []) if (!field.includes('.') && !(field in args)) args[field] = cctx.caller.identity;
    }

    // Reconnect drains the gate itself; every other call holds it while it uses the runtime.
    const ticket = tool.swapsRuntime ? undefined : await this.gate.enter();
    const call: Call = { caller: cctx.caller, transport: cctx.transport ?? (cctx.caller ? 'mcp-http' : 'mcp-stdio'), action: name,
      requestId: cctx.requestId ?? randomUUID() };
    const ctx: ToolContext = {
      ...call,
      runtime: this.runtime.forCall(call),
      home: this.home,
      signal: ticket ? AbortSignal.any([cctx.signal, ticket.signal]) : cctx.signal,
      onJobProgress: cctx.onJobProgress,
      clientRoots: cctx.clientRoots,
      reconnect: () => this.reconnect(),
    };
    let result: unknown;
    try {
      const run = () => toolCallSpan(name, () => tool.handler(args, ctx));
      result = tool.guards.vectorWrite ? await this.watchdogs.guardWrite(name, run) : await run();
    } catch (e) {
      const failure = toolFailure(tool, e);
      if (failure) {
        if (isPalaceError(e)) cctx.onToolFailure?.(e);
        return wrapResult(failure);
      }
      const errorClass = isPalaceError(e) && e.details?.error_class ? String(e.details.error_class) : e instanceof Error ? e.constructor.name : typeof e;
      const message = e instanceof Error ? e.message : String(e);
      if (!(isPalaceError(e) && e.details?.error_class === 'ValueError')) this.log.error({ err: e }, `mempalace mcp: ${name} failed: ${message}`);
      throw new McpError(-32000, 'Internal tool error', { error_class: errorClass, message });
    } finally {
      ticket?.leave();
    }
    if (tool.serverDiagnostics && typeof result === 'object' && result !== null && !Array.isArray(result)) {
      result = decorateStatus(result as Record<string, unknown>, {
        sqlite_integrity: this.integrity.current(),
        library_versions: this.library.payload(),
        updates: { server: { enabled: false, installed: this.version } },
      });
    }
    return wrapResult(result);
  }

  async reconnect(): Promise<ReconnectResult> {
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
          success: false,
          message: 'SQLite integrity check failed after reconnect',
          sqlite_integrity: integrity,
          vector_disabled: false,
          vector_disabled_reason: '',
          hint: 'Stop all clients and writers, back up the palace directory, repair it offline, then reconnect.',
        };
      }
      const drawers = await this.runtime.stores.drawers.count();
      return { success: true, message: 'Reconnected to palace', drawers, vector_disabled: false, vector_disabled_reason: '' };
    } catch (e) {
      return { success: false, message: e instanceof Error ? e.message : String(e), drawers: 0, vector_disabled: false,
        error: e instanceof Error ? e.message : String(e) };
    }
  }

  /** One SDK server over this state: one per stdio session, or one per stateless HTTP request. */
  createServer(caller?: Caller): Server {
    return createSdkServer(this, caller);
  }

  /** Close the runtime served now: after a reconnect that is the reopened one (the one before is closed by the reconnect). */
  async close(): Promise<void> {
    this.watchdogs.stop();
    await this.runtime.close();
  }
}
