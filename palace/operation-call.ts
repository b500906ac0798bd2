/**
 * What an operation may need from the call that runs it, beyond its input and the runtime: who
 * calls and through which face (palace/call.ts), the call's cancellation, where job progress is
 * relayed, the MCP client's roots, the MemPalace home, and the means to reopen the palace. Every
 * face fills it (mcp/server.ts, api/bind.ts, the CLI through the tool table); an operation's
 * `context(rt, call)` takes what it uses and ignores the rest.
 */
import type { JobProgress } from '../stores/ports/job-engine.js';
import type { Call } from './call.js';

export interface OperationCall extends Call {
  /** Aborted when the caller goes away (MCP cancellation, an HTTP client that hung up). */
  signal: AbortSignal;
  /** Relays a running job's progress to the caller (MCP progress notifications); undefined when nobody listens. */
  onJobProgress: ((p: JobProgress) => void) | undefined;
  /** The MCP client's roots as absolute directories; undefined on other faces or without the roots capability. */
  clientRoots(): Promise<string[] | undefined>;
  /** The MemPalace home (`~/.mempalace`): hook settings and the save hook's record. */
  home: string;
  /** Drops and reopens the store handles (mempalace_reconnect); only a face that owns its runtime can. */
  reconnect: (() => Promise<ReconnectResult>) | undefined;
}

/** What reopening the palace reports: whether it worked and why not, plus diagnostics (drawer count, integrity). */
export interface ReconnectResult {
  success: boolean;
  message: string;
  [detail: string]: unknown;
}
