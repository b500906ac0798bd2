/**
 * What a tool is (one row of the registry) and what its handler receives. Handlers are thin:
 * the dispatcher has already checked the arguments against the input schema and the gates.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Caller } from '../core/caller.js';
import type { CallTransport } from '../palace/call.js';
import type { OperationCall } from '../palace/operation-call.js';
import type { Operation } from '../palace/operation.js';
import type { PalaceError } from '../core/errors.js';
import type { Runtime } from '../palace/runtime.js';
import type { JobProgress } from '../jobs/job.js';
import type { JsonSchema } from './schema.js';
import type { Logger } from '../core/log.js';

/** Guard sets of docs/tools.md §1 (the spec's letters in brackets). */
export interface Guards {
  /** [M] Mutating: refused by the stale-library gate. */
  mutating?: true;
  /** [V] Vector write: watched by the write-stall watchdog. */
  vectorWrite?: true;
  /** [X] Peer-writer exempt (logstream writes): never needs the writer lease. */
  peerWriterExempt?: true;
  /** [I] Allowed while the integrity check has failed. */
  integritySafe?: true;
  /** [R] Refused and hidden in read-only mode. */
  readOnlyRefused?: true;
  /** [L] Long-running write: a job, never waits for a lock. */
  longRunning?: true;
}

/** What one `tools/call` brings from its transport. */
export interface CallContext {
  caller: Caller | undefined;
  signal: AbortSignal;
  onJobProgress: ((p: JobProgress) => void) | undefined;
  clientRoots(): Promise<string[] | undefined>;
  /** The face the call came through; by default `mcp-http` with a caller, `mcp-stdio` without. */
  transport?: CallTransport | undefined;
  /** The JSON-RPC request's id, for the audit trail (a fresh one when absent). */
  requestId?: string | undefined;
  /**
   * Told of the palace error behind a tool-level failure result, which carries no error code (the
   * CLI keeps the code for its exit status: a refused input exits 2).
   */
  onToolFailure?: ((error: PalaceError) => void) | undefined;
}

/** What an SDK server is wired to (sdk-server.ts): the server state of server.ts. */
export interface McpService {
  readonly version: string;
  readonly runtime: Runtime;
  log: Logger;
  listTools(): Tool[];
  callTool(name: string, rawArgs: Record<string, unknown> | undefined, cctx: CallContext): Promise<CallToolResult>;
}

/** What a handler receives: the runtime this call sees, and the call itself (palace/operation-call.ts). */
export interface ToolContext extends OperationCall {
  runtime: Runtime;
}

export interface ToolDef {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
  guards: Guards;
  /** Deletes or ends something (MCP destructiveHint). */
  destructive?: boolean;
  /** The same call twice changes nothing more (MCP idempotentHint). */
  idempotent?: boolean;
  /** Reads outside the palace (MCP openWorldHint). */
  openWorld?: boolean;
  /** Shape of this tool's tool-level failures: `{ error }` or `{ success: false, error }`. */
  errorShape: 'error' | 'success_false';
  /** The schema arguments are checked against when it is not `inputSchema` (an operation's, palace/operation.ts). */
  validation?: JsonSchema;
  /** Properties whose published bounds are hints: handlers clamp instead of the schema rejecting. */
  advisory?: string[];
  /** Argument paths naming the writing agent, checked against an HTTP caller's identity. */
  agentFields?: string[];
  /** Required parameters that may be given under an alias (parameter → alias): the alias fills the parameter when it is absent. */
  requiredAliases?: Record<string, string>;
  /** The result is decorated with this server's diagnostics: integrity, library versions, updates (docs/tools.md §12). */
  serverDiagnostics?: true;
  /** Swaps the runtime itself (mempalace_reconnect): it drains the runtime gate, so the call does not hold it. */
  swapsRuntime?: true;
  /** Spec-exact messages for enum violations, by property. */
  enumMessages?: Record<string, (value: unknown) => string>;
  /** The palace operation the tool binds (mcp/bind.ts), for the faces that compare what they publish. */
  operation?: Operation;
  handler(args: Record<string, unknown>, ctx: ToolContext): Promise<unknown>;
}
