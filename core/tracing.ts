/**
 * Spans over the OpenTelemetry API. Until the composition root starts an SDK (app/tracing/sdk.ts,
 * only when an OTLP endpoint is configured) the API's tracer is a no-op, so these helpers cost a
 * function call and allocate no span data.
 */
import type { Attributes, Context, Span } from '@opentelemetry/api';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';

export const tracer = trace.getTracer('mempalace');

/** The error's class for `error.type` (the semantic conventions' attribute for a failed operation). */
export function errorType(e: unknown): string {
  if (typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string') return e.code;
  return e instanceof Error ? e.constructor.name : typeof e;
}

/** Marks `span` failed with `e` (status, exception event, `error.type`). */
export function recordFailure(span: Span, e: unknown): void {
  span.recordException(e instanceof Error ? e : String(e));
  span.setAttribute('error.type', errorType(e));
  span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent: an extracted remote context; the active context otherwise. */
  parent?: Context;
}

/** Runs `fn` inside a new active span that ends when `fn` settles; a rejection marks it failed. */
export async function inSpan<T>(name: string, opts: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  const parent = opts.parent ?? context.active();
  const span = tracer.startSpan(name, { ...(opts.kind !== undefined ? { kind: opts.kind } : {}), ...(opts.attributes ? { attributes: opts.attributes } : {}) },
    parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (e) {
    recordFailure(span, e);
    throw e;
  } finally {
    span.end();
  }
}

/** An MCP tool call as the server handles it (OpenTelemetry MCP conventions: `tools/call {gen_ai.tool.name}`). */
export function toolCallSpan<T>(tool: string, fn: () => Promise<T>): Promise<T> {
  return inSpan(`tools/call ${tool}`, {
    kind: SpanKind.SERVER,
    attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': tool, 'gen_ai.operation.name': 'execute_tool' },
  }, () => fn());
}

/** One palace operation as a face runs it, with the wing its input names. */
export function operationSpan<T>(operation: string, input: unknown, fn: () => Promise<T>): Promise<T> {
  const wing = typeof input === 'object' && input !== null && 'wing' in input && typeof input.wing === 'string' ? input.wing : undefined;
  return inSpan(`mempalace.operation ${operation}`, {
    attributes: { 'mempalace.operation': operation, ...(wing !== undefined ? { 'mempalace.wing': wing } : {}) },
  }, () => fn());
}
