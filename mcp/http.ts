/**
 * The Streamable HTTP transport for `/mcp`, stateless: every POST gets a fresh SDK server and
 * transport over the shared `PalaceMcp`, so any replica can answer any request. Callers are
 * authenticated by a bearer-token hook; Host and Origin headers are checked against an allow
 * list (DNS-rebinding defence). Bodies pass the same envelope check as stdio (mcp/envelope.ts).
 *
 * Cancellation: a request is aborted when its client closes the HTTP request, or when the same
 * caller posts `notifications/cancelled` naming its id (a later POST, as stateless clients send
 * it). Request ids are scoped per caller identity, since stateless HTTP has no session.
 */
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCErrorResponse, RequestId } from '@modelcontextprotocol/sdk/types.js';
import express from 'express';
import type { NextFunction, Request, Response, Router } from 'express';
import { MAX_MESSAGE_BYTES, errorReply, parseErrorReply, screen } from './envelope.js';
import type { Caller } from '../core/caller.js';
import type { PalaceMcp } from './server.js';
import { LOCAL_HOSTS, hostnameOf } from '../core/host-header.js';

export type ResolveCaller = (req: Request) => Caller | null | Promise<Caller | null>;

export interface McpRouterOptions {
  /** Authenticates a request; null means 401. */
  resolveCaller: ResolveCaller;
  /** The `WWW-Authenticate` challenge of a 401 (default `Bearer`). */
  challenge?: (req: Request) => string;
  /** Host names accepted in Host/Origin besides localhost, 127.0.0.1 and ::1. */
  allowedHosts?: string[];
}

function rpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).json(errorReply(null, code, message));
}

interface BodyParserError {
  type?: string;
  limit?: number;
}

/** body-parser's failure on `/mcp` as the JSON-RPC error both transports give, or undefined. */
export function bodyErrorReply(err: unknown): { status: number; reply: JSONRPCErrorResponse } | undefined {
  const type = (err as BodyParserError | null)?.type;
  if (type === 'entity.too.large') {
    return { status: 413,
      reply: errorReply(null, ErrorCode.InvalidRequest,
        `Invalid Request: message exceeds the ${(err as BodyParserError).limit ?? MAX_MESSAGE_BYTES}-byte limit`) };
  }
  if (type === 'entity.parse.failed') return { status: 400, reply: parseErrorReply() };
  if (typeof type === 'string') return { status: 400, reply: errorReply(null, ErrorCode.InvalidRequest, `Invalid Request: malformed body (${type})`) };
  return undefined;
}

/** In-flight requests by caller and JSON-RPC id, so a later POST can cancel one. */
class InFlight {
  private readonly byKey = new Map<string, () => void>();

  private static key(caller: Caller, id: RequestId): string {
    return `${caller.identity}\u0000${typeof id}:${String(id)}`;
  }

  add(caller: Caller, id: RequestId, cancel: () => void): () => void {
    const key = InFlight.key(caller, id);
    this.byKey.set(key, cancel);
    return () => {
      if (this.byKey.get(key) === cancel) this.byKey.delete(key);
    };
  }

  cancel(caller: Caller, id: unknown): boolean {
    if (typeof id !== 'string' && typeof id !== 'number') return false;
    const cancel = this.byKey.get(InFlight.key(caller, id));
    cancel?.();
    return cancel !== undefined;
  }
}

/** Resolve `Authorization: Bearer <token>` against a token table. */
export function bearerTokenResolver(tokens: ReadonlyMap<string, Caller>): ResolveCaller {
  return (req) => {
    const header = req.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    return match ? tokens.get(match[1]!) ?? null : null;
  };
}

export function mcpRouter(mcp: PalaceMcp, opts: McpRouterOptions): Router {
  const allowed = new Set([...LOCAL_HOSTS, ...(opts.allowedHosts ?? []).map((h) => h.toLowerCase())]);
  const router = express.Router();
  const inflight = new InFlight();

  router.use('/mcp', (req, res, next) => {
    const host = req.headers.host;
    if (!host || !allowed.has(hostnameOf(host))) return rpcError(res, 403, -32000, `Forbidden: host '${host ?? ''}' is not allowed`);
    const origin = req.headers.origin;
    if (origin !== undefined) {
      let originHost: string;
      try {
        originHost = new URL(origin).hostname.replace(/^\[|\]$/g, '').toLowerCase();
      } catch {
        return rpcError(res, 403, -32000, 'Forbidden: malformed Origin');
      }
      if (!allowed.has(originHost)) return rpcError(res, 403, -32000, `Forbidden: origin '${origin}' is not allowed`);
    }
    next();
  });

  router.post('/mcp', express.json({ limit: MAX_MESSAGE_BYTES, strict: false }), async (req, res) => {
    let caller: Caller | null;
    try {
      caller = await opts.resolveCaller(req);
    } catch (e) {
      (req.log ?? mcp.log).error({ err: e }, 'mempalace mcp: caller resolution failed');
      caller = null;
    }
    if (!caller) {
      res.setHeader('WWW-Authenticate', opts.challenge?.(req) ?? 'Bearer');
      return rpcError(res, 401, -32001, 'Unauthorized: a valid bearer token is required');
    }
    const screened = screen(req.body);
    if (screened.kind === 'reply') {
      // An envelope error is a bad HTTP request; a request's bad params are a JSON-RPC answer.
      return res.status(screened.reply.id === null ? 400 : 200).json(screened.reply);
    }
    if (screened.kind === 'drop') {
      (req.log ?? mcp.log).warn(`mempalace mcp: dropped a message: ${screened.reason}`);
      return res.status(202).end();
    }
    const message = screened.message as { id?: RequestId; method?: string; params?: { requestId?: unknown } };
    if (message.method === 'notifications/cancelled') {
      inflight.cancel(caller, message.params?.requestId);
      return res.status(202).end();
    }
    const server = mcp.createServer(caller);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    // Closing the server aborts its in-flight handler (the SDK aborts the handler's signal).
    const shutdown = () => {
      void transport.close();
      void server.close();
    };
    const forget = message.id === undefined ? undefined : inflight.add(caller, message.id, shutdown);
    res.on('close', () => {
      forget?.();
      shutdown();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, screened.message);
    } catch (e) {
      (req.log ?? mcp.log).error({ err: e }, 'mempalace mcp: HTTP request failed');
      if (!res.headersSent) rpcError(res, 500, -32603, 'Internal server error');
    }
  });

  router.use('/mcp', (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    const mapped = bodyErrorReply(err);
    if (!mapped || res.headersSent) return next(err);
    res.status(mapped.status).json(mapped.reply);
  });

  // Stateless: no standalone SSE stream and no sessions to delete.
  const notAllowed = (_req: Request, res: Response) => {
    res.setHeader('Allow', 'POST');
    rpcError(res, 405, -32000, 'Method not allowed: this endpoint is stateless, use POST');
  };
  router.get('/mcp', notAllowed);
  router.delete('/mcp', notAllowed);
  return router;
}
