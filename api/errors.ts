/**
 * How errors leave the HTTP API: a PalaceError becomes its status code (with Retry-After when a
 * retry can help) and its own JSON shape
 * (`{ error, code, field?, rule?, retryable, ... }`); body-parser failures become 400/413 with
 * the same shape (JSON-RPC errors on `/mcp`); anything else is a 500 that says nothing about
 * the internals.
 */
import type { ErrorRequestHandler, Response } from 'express';
import type { ErrorCode, ErrorKind } from '../core/errors.js';
import { PalaceError, isPalaceError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { bodyErrorReply } from '../mcp/http.js';

const STATUS: Record<ErrorCode, number> = {
  invalid_argument: 400,
  not_found: 404,
  already_exists: 409,
  already_running: 409,
  conflict: 409,
  too_large: 413,
  permission_denied: 403,
  read_only: 403,
  unauthenticated: 401,
  rate_limited: 429,
  no_palace: 404,
  store_unavailable: 503,
  stale_lease: 409,
  cancelled: 409,
  internal: 500,
};

/** Seconds a client is asked to wait before retrying, unless the error names its own `retry_after_s`. */
export const RETRY_AFTER_S = 5;

export interface HttpErrorMapping {
  status: number;
  /** Send `Retry-After`: only when a retry can help. */
  retryAfter: boolean;
}

/** How an error leaves the HTTP API: the status from its code, Retry-After from `retryable`. */
export function httpErrorOf({ code, retryable }: ErrorKind): HttpErrorMapping {
  return { status: STATUS[code], retryAfter: retryable };
}

/** The error's status and headers, with its own JSON shape as the body unless another is given (JSON-RPC on /mcp). */
export function sendPalaceError(res: Response, e: PalaceError, body: unknown = e.toJSON()): void {
  const { status, retryAfter } = httpErrorOf(e);
  if (retryAfter) res.setHeader('Retry-After', String(e.details?.retry_after_s ?? RETRY_AFTER_S));
  res.status(status).json(body);
}

export function unauthorized(res: Response, challenge = 'Bearer'): void {
  res.setHeader('WWW-Authenticate', challenge);
  sendPalaceError(res, new PalaceError('unauthenticated', 'a valid bearer token is required'));
}

interface BodyParserError {
  type?: string;
  status?: number;
  limit?: number;
  expose?: boolean;
  message?: string;
}

/** body-parser's own errors (too large, malformed JSON, bad charset) as structured errors. */
function fromBodyParser(err: BodyParserError): PalaceError | undefined {
  if (err.type === 'entity.too.large') {
    return new PalaceError('too_large', `request body exceeds the ${err.limit ?? 'configured'} byte limit of this route`, { field: 'body', rule: 'max_bytes',
      details: { limit_bytes: err.limit } });
  }
  if (err.type === 'entity.parse.failed') return new PalaceError('invalid_argument', 'request body is not valid JSON', { field: 'body', rule: 'json' });
  if (typeof err.status === 'number' && err.status >= 400 && err.status < 500) {
    return new PalaceError('invalid_argument', err.expose && err.message ? err.message : 'malformed request body', { field: 'body', rule: err.type ?? 'body' });
  }
  return undefined;
}

export interface ErrorHandlerHooks {
  onStoreError(store: string): void;
  log: Logger;
}

export function errorHandler(hooks: ErrorHandlerHooks): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const mcp = req.path === '/mcp' ? bodyErrorReply(err) : undefined;
    if (mcp) {
      res.status(mcp.status).json(mcp.reply);
      return;
    }
    const e = isPalaceError(err) ? err : fromBodyParser(err as BodyParserError);
    if (e) {
      if (e.code === 'store_unavailable') hooks.onStoreError(e.store ?? 'unknown');
      if (httpErrorOf(e).status >= 500) (req.log ?? hooks.log).error({ err: e }, `mempalace api: ${req.method} ${req.path}: ${e.message}`);
      sendPalaceError(res, e);
      return;
    }
    (req.log ?? hooks.log).error({ err }, `mempalace api: ${req.method} ${req.path} failed`);
    sendPalaceError(res, new PalaceError('internal', 'internal server error'));
  };
}
