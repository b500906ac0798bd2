/**
 * The CLI faces of the palace go through the tool table: the same validation, the same palace
 * operation, the same result shape as an MCP call, with no second implementation. A tool-level
 * failure (`{error}` or `{success: false}`) becomes exit code 1 (75 when it says `retryable`), a
 * rejected argument (a schema violation or a rule `run` checks) exit code 2.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { stringify } from 'yaml';
import type { PalaceError } from '../core/errors.js';
import { invalidArgument } from '../core/errors.js';
import { PalaceMcp } from '../mcp/server.js';
import { printJson, ToolFailed } from './output.js';
import type { Runtime } from '../palace/runtime.js';

function isFailure(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return v.success === false || (typeof v.error === 'string' && v.success !== true);
}

/** Calls `mempalace_<name>` with `args` (undefined values dropped); returns its result. */
export async function callTool(rt: Runtime, home: string, name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<unknown> {
  const mcp = new PalaceMcp(rt, { home });
  const clean = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined));
  let result;
  let refusal: PalaceError | undefined;
  try {
    result = await mcp.callTool(`mempalace_${name}`, clean, { caller: undefined, signal: signal ?? new AbortController().signal, onJobProgress: undefined,
      clientRoots: async () => undefined, transport: 'cli', onToolFailure: (e) => (refusal = e) });
  } catch (e) {
    if (e instanceof McpError && e.code === ErrorCode.InvalidParams)
      throw invalidArgument('arguments', 'tool_schema', e.message.replace(/^MCP error -?\d+: /, ''));
    throw e;
  }
  const structured = result.structuredContent as Record<string, unknown> | undefined;
  const value = structured && Object.keys(structured).length === 1 && Array.isArray(structured.items) ? structured.items : structured;
  // A refused input is thrown as the palace error itself, whose code makes it exit 2 as the CLI's own commands do.
  if (isFailure(value)) throw refusal?.code === 'invalid_argument' ? refusal : new ToolFailed(value);
  return value;
}

/** JSON with --json, YAML-shaped text otherwise (readable, and still every field). */
export function printResult(value: unknown, json: boolean): void {
  if (json) printJson(value);
  else process.stdout.write(stringify(value, { lineWidth: 120 }));
}
