/**
 * What a "session" is in the audit trail, so `mempalace revert --session S` can undo one run of
 * one agent: the session the call's face names (the `X-Mempalace-Session` header over HTTP, a
 * hook's `session_id`), else `MEMPALACE_SESSION`, else, for the faces that live in one process
 * per agent run (stdio MCP, the CLI, hooks), that process. An HTTP call that names none has no
 * session: its writes are found by agent and time.
 */
import os from 'node:os';
import type { Call } from '../call.js';

const processSession = `${os.hostname()}:${process.pid}:${new Date().toISOString()}`;

export function sessionOf(call: Call, configured: string | undefined): string | undefined {
  if (call.session) return call.session;
  if (configured) return configured;
  if (call.transport === 'mcp-stdio' || call.transport === 'cli' || call.transport === 'hook') return `${call.transport}:${processSession}`;
  return undefined;
}

/** The HTTP header a client names its session with. */
export const SESSION_HEADER = 'x-mempalace-session';
