/**
 * One call into the palace: who makes it and through which face. Every face (MCP over stdio or
 * HTTP, REST, the CLI, hooks, webhooks) builds one per request and asks the runtime for the view
 * that call sees (`Runtime.forCall`), so what a caller may read and write, and the audit record
 * of what it changed, are decided in one place for every tool and route.
 */
import type { Caller } from '../core/caller.js';

export type CallTransport = 'mcp-stdio' | 'mcp-http' | 'rest' | 'cli' | 'hook' | 'webhook' | 'job';

export interface Call {
  /** The authenticated HTTP caller; undefined for the local user (stdio MCP, the CLI, hooks). */
  caller: Caller | undefined;
  transport: CallTransport;
  /** The tool or route called: `mempalace_add_drawer`, `POST /v1/jobs/mine`, `cli mine`. */
  action: string;
  /** The request's id (REST: its `X-Request-Id`; MCP: the JSON-RPC id), for the audit trail and logs. */
  requestId: string;
  /**
   * The caller's session, when its face names one: the `X-Mempalace-Session` header (REST, MCP
   * over HTTP), a hook's `session_id`, `MEMPALACE_SESSION` (CLI, stdio). palace/audit/session.ts
   * fills in the rest.
   */
  session?: string | undefined;
}
