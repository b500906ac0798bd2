/**
 * One HTTP server span per request (OpenTelemetry HTTP server conventions): it continues the
 * caller's trace from its `traceparent` header, is named `{method} {http.route}` once routing has
 * matched, and is the parent of the tool, operation and store spans the request causes. With no
 * SDK started every call here is the API's no-op.
 */
import type { RequestHandler } from 'express';
import { SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import { tracer } from '../core/tracing.js';

export function httpServerSpans(): RequestHandler {
  return (req, res, next) => {
    const parent = propagation.extract(context.active(), req.headers);
    const span = tracer.startSpan(req.method, {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': req.method,
        'url.path': req.path,
        'url.scheme': req.protocol,
        'network.protocol.version': req.httpVersion,
        ...(req.headers['user-agent'] ? { 'user_agent.original': req.headers['user-agent'] } : {}),
        ...(req.socket.localPort ? { 'server.port': req.socket.localPort } : {}),
      },
    }, parent);
    res.once('close', () => {
      const routePath: unknown = (req.route as { path?: unknown } | undefined)?.path;
      if (typeof routePath === 'string') {
        const route = `${req.baseUrl}${routePath}`;
        span.updateName(`${req.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) {
        span.setAttribute('error.type', String(res.statusCode));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    });
    context.with(trace.setSpan(parent, span), next);
  };
}
