/**
 * What bounds a request: per-token rate limits (a token bucket per principal, 429 with
 * Retry-After), body size caps (413), the cap on concurrent SSE streams (503), security headers
 * (helmet), CORS (off unless origins are configured) and the Host/Origin pin that `/mcp` also
 * applies (DNS-rebinding defence, docs/logstream.md §7.1).
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';
import { PalaceError } from '../core/errors.js';
import { MAX_MESSAGE_BYTES, errorReply } from '../mcp/envelope.js';
import { sendPalaceError } from './errors.js';
import { LOCAL_HOSTS, hostnameOf } from '../core/host-header.js';

/** `/mcp` must accept 16 MiB so a 4 MiB artifact survives JSON escaping (docs/logstream.md §7.1). */
export const MCP_BODY_LIMIT_BYTES = MAX_MESSAGE_BYTES;
/** REST bodies carry no artifacts; the largest is a search or job request. Matches the event body cap. */
export const REST_BODY_LIMIT_BYTES = 256 * 1024;
/** Git push webhooks: GitHub caps a delivery at 25 MB, so a large legitimate push must fit. */
export const WEBHOOK_BODY_LIMIT_BYTES = 25 * 1024 * 1024;

export interface RateLimitOptions {
  /** Tokens added per second. */
  ratePerSecond: number;
  /** Bucket size: the burst a client may spend at once. */
  burst: number;
}

/** One bucket per key, refilled continuously; idle full buckets are dropped. */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; atMs: number }>();
  private lastSweepMs = 0;

  constructor(private readonly opts: RateLimitOptions, private readonly now: () => number = Date.now) {}

  /** Take one token: 0 when allowed, else the seconds until one is available. */
  take(key: string): number {
    const now = this.now();
    this.sweep(now);
    const b = this.buckets.get(key) ?? { tokens: this.opts.burst, atMs: now };
    b.tokens = Math.min(this.opts.burst, b.tokens + ((now - b.atMs) / 1000) * this.opts.ratePerSecond);
    b.atMs = now;
    this.buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.opts.ratePerSecond));
  }

  private sweep(now: number): void {
    if (now - this.lastSweepMs < 60_000) return;
    this.lastSweepMs = now;
    const fullAfterMs = (this.opts.burst / this.opts.ratePerSecond) * 1000;
    for (const [key, b] of this.buckets) if (now - b.atMs > fullAfterMs) this.buckets.delete(key);
  }
}

/**
 * A refusal before any route ran: on `/mcp` a JSON-RPC error body (MCP clients read only those),
 * elsewhere the API's structured error; the same status and headers on both.
 */
export function refuse(req: Request, res: Response, e: PalaceError): void {
  sendPalaceError(res, e, req.path === '/mcp' ? errorReply(null, -32000, e.message) : undefined);
}

export function rateLimit(buckets: TokenBuckets, keyOf: (req: Request) => string): RequestHandler {
  return (req, res, next) => {
    const wait = buckets.take(keyOf(req));
    if (wait === 0) return next();
    refuse(req, res, new PalaceError('rate_limited', `rate limit exceeded; retry after ${wait} s`, { retryable: true, details: { retry_after_s: wait } }));
  };
}

/** Counts concurrent SSE streams against the configured cap (docs/decisions.md Q7). */
export class SseGate {
  private active = 0;
  constructor(readonly max: number) {}

  tryAcquire(): boolean {
    if (this.active >= this.max) return false;
    this.active += 1;
    return true;
  }

  release(): void {
    this.active = Math.max(0, this.active - 1);
  }

  get count(): number {
    return this.active;
  }
}

/** docs/logstream.md §7.2: the over-capacity answer. */
export function sseOverCapacity(res: Response): void {
  res.status(503).set({ 'Retry-After': '5', 'Content-Length': '0', Connection: 'close' }).end();
}

export function securityHeaders(): RequestHandler {
  // The dashboard loads only its own script and stylesheet; nothing inline, nothing remote. The
  // server speaks plain HTTP on loopback (TLS is a fronting proxy's job), so no forced upgrade.
  return helmet({
    contentSecurityPolicy: {
      directives: { 'default-src': ["'self'"], 'script-src': ["'self'"], 'style-src': ["'self'"], 'img-src': ["'self'", 'data:'], 'connect-src': ["'self'"],
        'upgrade-insecure-requests': null },
    },
    crossOriginResourcePolicy: { policy: 'same-origin' },
  });
}

/** CORS for the configured origins only; with none configured no CORS header is ever sent. */
export function cors(origins: readonly string[]): RequestHandler {
  const allowed = new Set(origins);
  return (req: Request, res: Response, next: NextFunction) => {
    const origin = req.headers.origin;
    if (allowed.size === 0 || origin === undefined || !allowed.has(origin)) return next();
    res.vary('Origin');
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Expose-Headers', 'Retry-After, Mcp-Session-Id, X-Request-Id');
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
      res.setHeader('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
      res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, Last-Event-ID, Mcp-Protocol-Version, X-Request-Id');
      res.setHeader('Access-Control-Max-Age', '600');
      res.status(204).end();
      return;
    }
    next();
  };
}

/**
 * The same Host/Origin rule as `/mcp`: Host must be a loopback name or a configured host; an
 * Origin, when sent, must name one of those or a configured CORS origin.
 */
export function hostPin(allowedHosts: readonly string[], corsOrigins: readonly string[]): RequestHandler {
  const hosts = new Set([...LOCAL_HOSTS, ...allowedHosts.map((h) => h.toLowerCase())]);
  const origins = new Set(corsOrigins);
  return (req, res, next) => {
    const host = req.headers.host;
    if (!host || !hosts.has(hostnameOf(host))) {
      refuse(req, res, new PalaceError('permission_denied', `Forbidden: host '${host ?? ''}' is not allowed`, { rule: 'host_pin' }));
      return;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !origins.has(origin)) {
      let originHost: string | undefined;
      try {
        originHost = new URL(origin).hostname.replace(/^\[|\]$/g, '').toLowerCase();
      } catch {
        originHost = undefined;
      }
      if (originHost === undefined || !hosts.has(originHost)) {
        refuse(req, res, new PalaceError('permission_denied', `Forbidden: origin '${origin}' is not allowed`, { rule: 'origin' }));
        return;
      }
    }
    next();
  };
}
