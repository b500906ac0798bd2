/**
 * One log record per HTTP request (pino-http): method, URL, status, response time and a request
 * id. The id is the client's `X-Request-Id` when it looks like one, a fresh UUID otherwise; it is
 * echoed in the `X-Request-Id` response header and carried by every record logged through
 * `req.log`, so a client can quote it and an operator can find the request's errors. Credentials
 * never reach the log: the logger redacts auth headers and token query values (core/log.ts), and
 * the URL is logged with its token query values replaced.
 */
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../core/log.js';
import { redactUrl } from '../core/log.js';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Probes and scrapes: logged at debug, so they do not drown the requests of agents. */
const PROBE_PATHS = new Set(['/healthz', '/metrics']);

export function requestLog(log: Logger): RequestHandler {
  return pinoHttp({
    logger: log,
    // `req.log` (the route's and the error handler's records) carries just the id; the completion record carries the request too.
    quietReqLogger: true,
    genReqId: (req, res) => {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    customLogLevel: (req, res, err) => {
      if (err || res.statusCode >= 500) return 'error';
      if (res.statusCode >= 400) return 'warn';
      return PROBE_PATHS.has((req.url ?? '').split('?')[0]!) ? 'debug' : 'info';
    },
    serializers: { req: (req: { url: string }) => ({ ...req, url: redactUrl(req.url) }) },
  });
}
