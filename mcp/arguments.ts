/**
 * The arguments of a `tools/call` before the handler sees them (docs/tools.md §9.3–§9.4): unknown
 * parameters refused, numbers coerced, `null` read as absent, required parameters present
 * (given under their alias where the tool declares one). Each failure is -32602.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { RegisteredTool } from './registry.js';

function quoteList(keys: string[]): string {
  return keys.map((k) => `'${k}'`).join(', ');
}

const INTEGER_TEXT = /^\s*[+-]?\d+\s*$/;
const NUMBER_TEXT = /^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$/;

/** docs/tools.md §9.4: integers truncate or parse; numbers parse; other types pass through. */
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
      // null means "absent" for every optional non-numeric parameter (docs/tools.md §0.2).
      delete args[key];
    }
  }
}

/** A copy of the call's arguments with only declared parameters, coerced to their types. */
export function coercedArguments(tool: RegisteredTool, rawArgs: Record<string, unknown> | undefined): Record<string, unknown> {
  const args: Record<string, unknown> = { ...(rawArgs ?? {}) };
  delete args.wait_for_previous;
  const unknown = Object.keys(args).filter((k) => !tool.propertyTypes.has(k));
  if (unknown.length > 0) {
    throw new McpError(ErrorCode.InvalidParams, `Unknown parameter${unknown.length > 1 ? 's' : ''} ${quoteList(unknown)} for tool ${tool.name}`);
  }
  coerce(tool, args);
  return args;
}

/** Fill required parameters from their aliases, then refuse the call if one is still missing. */
export function requireArguments(tool: RegisteredTool, args: Record<string, unknown>): void {
  const required = [...tool.required];
  for (const [name, alias] of Object.entries(tool.requiredAliases ?? {})) {
    if (args[name] === undefined && args[alias] !== undefined) args[name] = args[alias];
    required.push(name);
  }
  const missing = required.filter((k) => !(k in args));
  if (missing.length > 0) {
    throw new McpError(ErrorCode.InvalidParams, `Missing required parameter${missing.length > 1 ? 's' : ''} ${quoteList(missing)} for tool ${tool.name}`);
  }
}
