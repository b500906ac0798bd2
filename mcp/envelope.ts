/**
 * The JSON-RPC envelope check both transports run before a message reaches the SDK's `Server`,
 * so stdio and Streamable HTTP answer malformed input alike (docs/tools.md §9.1, issue 15):
 *
 * - unparseable text ⇒ -32700 `Parse error`, `id: null`;
 * - not an object, a batch array, a bad `jsonrpc`/`method`/`id` ⇒ -32600 `Invalid Request`;
 * - malformed `params` of a request ⇒ -32602 with a message naming the field (the SDK would
 *   answer -32603 with a raw schema dump); `tools/call` with `arguments: null` means `{}`.
 *
 * Notifications and responses never get a reply: a malformed one is dropped.
 */
import { CallToolRequestSchema, ErrorCode, InitializeRequestSchema, JSONRPCMessageSchema, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema, PingRequestSchema, ReadResourceRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCErrorResponse, JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';

/** The largest message either transport reads: 16 MiB, so a 4 MiB artifact survives JSON escaping (docs/logstream.md §7.1). */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export type Screened =
  | { kind: 'message'; message: JSONRPCMessage }
  | { kind: 'reply'; reply: JSONRPCErrorResponse }
  | { kind: 'drop'; reason: string };

export function errorReply(id: RequestId | null, code: number, message: string): JSONRPCErrorResponse {
  return { jsonrpc: '2.0', id, error: { code, message } } as JSONRPCErrorResponse;
}

export function parseErrorReply(detail?: string): JSONRPCErrorResponse {
  return errorReply(null, ErrorCode.ParseError, detail ? `Parse error: ${detail}` : 'Parse error');
}

/** Request methods whose params the SDK validates with these schemas. */
const PARAM_SCHEMAS = new Map<string, { safeParse(v: unknown): { success: boolean; error?: { issues: ZodIssueLike[] } } }>(
  [InitializeRequestSchema, PingRequestSchema, ListToolsRequestSchema, CallToolRequestSchema, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema,
    ReadResourceRequestSchema]
    .map((s) => [s.shape.method.value, s]),
);

interface ZodIssueLike {
  code: string;
  path: PropertyKey[];
  message: string;
  expected?: string;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function validId(id: unknown): id is RequestId {
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id));
}

function valueAt(root: unknown, path: PropertyKey[]): unknown {
  let v = root;
  for (const key of path) v = typeof v === 'object' && v !== null ? (v as Record<PropertyKey, unknown>)[key] : undefined;
  return v;
}

/** One schema issue of `checked` as "'field' is required (a string)" / "'field' must be a string". */
export function describeIssue(issue: ZodIssueLike, checked: unknown): string {
  const path = issue.path[0] === 'params' ? issue.path.slice(1) : issue.path;
  const field = path.map(String).join('.') || 'params';
  if (issue.code === 'invalid_type' && issue.expected) {
    const article = /^[aeiou]/.test(issue.expected) ? 'an' : 'a';
    return valueAt(checked, issue.path) === undefined
      ? `'${field}' is required (${article} ${issue.expected})`
      : `'${field}' must be ${article} ${issue.expected}`;
  }
  return `'${field}': ${issue.message}`;
}

function invalidParams(id: RequestId, message: string): Screened {
  return { kind: 'reply', reply: errorReply(id, ErrorCode.InvalidParams, `Invalid params: ${message}`) };
}

function screenToolsCall(id: RequestId, params: Record<string, unknown>): Screened | undefined {
  if (!('name' in params)) return invalidParams(id, "'name' is required for tools/call");
  if (params.arguments === null) delete params.arguments;
  if (typeof params.name !== 'string' || (params.arguments !== undefined && !isObject(params.arguments))) {
    return invalidParams(id, "'name' must be a string and 'arguments' an object");
  }
  return undefined;
}

/** Check one parsed message; `raw` may be anything `JSON.parse` returned. */
export function screen(raw: unknown): Screened {
  if (Array.isArray(raw)) {
    return { kind: 'reply',
      reply: errorReply(null, ErrorCode.InvalidRequest,
        'Invalid Request: batches are not supported (JSON-RPC batching was removed in MCP 2025-06-18); send one message at a time') };
  }
  if (!isObject(raw)) return { kind: 'reply', reply: errorReply(null, ErrorCode.InvalidRequest, 'Invalid Request: a message must be a JSON object') };
  const hasId = 'id' in raw;
  const replyId = hasId && validId(raw.id) ? raw.id : null;
  const invalid = (why: string): Screened => ({ kind: 'reply', reply: errorReply(replyId, ErrorCode.InvalidRequest, `Invalid Request: ${why}`) });
  if (raw.jsonrpc !== '2.0') return invalid('\'jsonrpc\' must be "2.0"');
  if (hasId && !validId(raw.id)) return invalid("'id' must be a string or an integer");

  if (!('method' in raw)) {
    // A response to one of our requests (roots/list): pass it on when well formed.
    const parsed = JSONRPCMessageSchema.safeParse(raw);
    return parsed.success ? { kind: 'message', message: raw as JSONRPCMessage } : { kind: 'drop', reason: 'malformed response' };
  }
  if (typeof raw.method !== 'string') return hasId ? invalid("'method' must be a string") : { kind: 'drop', reason: 'notification with a non-string method' };
  if (raw.params !== undefined && !isObject(raw.params)) {
    return hasId ? invalidParams(raw.id as RequestId, "'params' must be an object") : { kind: 'drop', reason: `${raw.method}: params is not an object` };
  }
  if (hasId) {
    const id = raw.id as RequestId;
    if (raw.method === 'tools/call') {
      const refused = screenToolsCall(id, (raw.params ?? {}) as Record<string, unknown>);
      if (refused) return refused;
    }
    const schema = PARAM_SCHEMAS.get(raw.method);
    const request = { method: raw.method, ...(raw.params === undefined ? {} : { params: raw.params }) };
    const checked = schema?.safeParse(request);
    if (checked && !checked.success) return invalidParams(id, checked.error!.issues.slice(0, 3).map((i) => describeIssue(i, request)).join('; '));
  }
  const parsed = JSONRPCMessageSchema.safeParse(raw);
  if (!parsed.success)
    return hasId
      ? invalid(parsed.error.issues.slice(0, 3).map((i) => describeIssue(i, raw)).join('; '))
      : { kind: 'drop', reason: 'malformed notification' };
  return { kind: 'message', message: raw as JSONRPCMessage };
}
