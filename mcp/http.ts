/**
 * The Streamable HTTP transport for `/mcp`, stateless: every POST gets a fresh SDK server and
 * transport over the shared `PalaceMcp`, so any replica can answer any request. Callers are
 * authenticated by a bearer-token hook; Host and Origin headers are checked against an allow
 * list (DNS-rebinding defence).
 */
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import express from 'express';
import type { Request, Response, Router } from 'express';
import type { Caller } from './types.js';
import type { PalaceMcp } from './server.js';

export type ResolveCaller = (req: Request) => Caller | null | Promise<Caller | null>;

export interface McpRouterOptions {
  /** Authenticates a request; null means 401. */
  resolveCaller: ResolveCaller;
  /** Host names accepted in Host/Origin besides localhost, 127.0.0.1 and ::1. */
  allowedHosts?: string[];
}

const LOCAL_HOSTS = ['localhost', '127.0.0.1', '::1'];

function hostnameOf(hostHeader: string): string {
  const h = hostHeader.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']'));
  const colon = h.lastIndexOf(':');
  return colon >= 0 && h.indexOf(':') === colon ? h.slice(0, colon) : h;
}

function rpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', id: null, error: { code, message } });
}

/** Resolve `Authorization: Bearer <token>` against a token table. */
export function bearerTokenResolver(tokens: ReadonlyMap<string, Caller>): ResolveCaller {
  return (req) => {
    const header = req.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    return match ? tokens.get(match[1]!) ?? null : null;
  };
}

export function mcpRouter(palace: PalaceMcp, opts: McpRouterOptions): Router {
  const allowed = new Set([...LOCAL_HOSTS, ...(opts.allowedHosts ?? []).map((h) => h.toLowerCase())]);
  const router = express.Router();

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

  router.post('/mcp', async (req, res) => {
    let caller: Caller | null;
    try {
      caller = await opts.resolveCaller(req);
    } catch (e) {
      palace.log(`mempalace mcp: caller resolution failed: ${e instanceof Error ? e.message : String(e)}`);
      caller = null;
    }
    if (!caller) {
      res.setHeader('WWW-Authenticate', 'Bearer');
      return rpcError(res, 401, -32001, 'Unauthorized: a valid bearer token is required');
    }
    const server = palace.createServer(caller);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (e) {
      palace.log(`mempalace mcp: HTTP request failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
      if (!res.headersSent) rpcError(res, 500, -32603, 'Internal server error');
    }
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
