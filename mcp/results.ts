/**
 * How a tool's outcome becomes a `tools/call` result: the JSON text plus `structuredContent`
 * (docs/decisions.md A7), with `isError: true` on tool-level errors (MCP 2025-11-25: input-validation and
 * execution errors are results the model sees, and clients treat a result without the flag as a
 * success). The structured error payload stays in `structuredContent`, so clients reading either
 * keep working.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ErrorCode, ErrorKind } from '../core/errors.js';
import { isPalaceError } from '../core/errors.js';
import type { RegisteredTool } from './registry.js';

const TOOL_ERROR_DETAIL_KEYS = ['suggestions'];

/** Codes the caller can act on: they reach the model as tool-level results, the rest as -32000. */
const TOOL_LEVEL_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'invalid_argument',
  'not_found',
  'conflict',
  'already_exists',
  'already_running',
  'too_large',
  'permission_denied',
  'stale_lease',
  'no_palace',
  'store_unavailable',
]);

export interface McpErrorMapping {
  /** A tool-level result (`isError: true`) rather than a JSON-RPC -32000 error. */
  toolLevel: boolean;
  /** The payload's `retryable` field; absent when undefined. */
  retryable: boolean | undefined;
}

/**
 * How an error reaches an MCP client. `retryable` is reported whenever a retry can help, and
 * always for a store error, so an agent tells an outage from a configuration fault.
 */
export function mcpErrorOf({ code, retryable }: ErrorKind): McpErrorMapping {
  return { toolLevel: TOOL_LEVEL_CODES.has(code), retryable: retryable || code === 'store_unavailable' ? retryable : undefined };
}

/** A PalaceError the caller can act on becomes a tool-level result; anything else is -32000. */
export function toolFailure(tool: RegisteredTool, e: unknown): Record<string, unknown> | undefined {
  // KG domain errors are -32000 with error_class ValueError whatever their code (docs/tools.md §9).
  if (!isPalaceError(e) || e.details?.error_class === 'ValueError') return undefined;
  const mapping = mcpErrorOf(e);
  if (!mapping.toolLevel) return undefined;
  const base: Record<string, unknown> = tool.errorShape === 'success_false' ? { success: false, error: e.message } : { error: e.message };
  // The field and the rule broken, as REST and the CLI report them.
  if (e.field !== undefined) base.field = e.field;
  if (e.rule !== undefined) base.rule = e.rule;
  for (const key of TOOL_ERROR_DETAIL_KEYS) if (e.details?.[key] !== undefined) base[key] = e.details[key];
  if (mapping.retryable !== undefined) base.retryable = mapping.retryable;
  switch (e.code) {
    case 'already_running':
      return { ...base, error_class: 'LockHeldByOtherProcess', ...(e.details?.job_id === undefined ? {} : { job_id: e.details.job_id }) };
    case 'store_unavailable':
      return { ...base, ...(e.store === undefined ? {} : { store: e.store }) };
    case 'no_palace':
      return { ...base, error: 'No palace found', hint: 'Run: mempalace init <dir> && mempalace mine <dir>' };
    default:
      return base;
  }
}

/** A tool-level error: an object carrying a string `error` (the TOOL_ERROR shape of schema.ts). */
export function isToolError(result: unknown): boolean {
  return typeof result === 'object' && result !== null && !Array.isArray(result) && typeof (result as { error?: unknown }).error === 'string';
}

export function wrapResult(result: unknown): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(result, null, 2) }],
    structuredContent: (Array.isArray(result) ? { items: result } : result) as Record<string, unknown>,
    ...(isToolError(result) ? { isError: true } : {}),
  };
}

/** The tool-level error of a tool, in its own shape (`{ error }` or `{ success: false, error }`). */
export function toolError(tool: RegisteredTool, message: string): CallToolResult {
  return wrapResult(tool.errorShape === 'success_false' ? { success: false, error: message } : { error: message });
}
