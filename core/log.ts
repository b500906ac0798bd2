/**
 * The process logger: pino, always to stderr (stdout carries MCP stdio JSON-RPC and CLI results).
 * `json` writes one JSON object per line, for log collectors (`serve`, `worker`); `pretty` writes
 * one readable line per record for people at a terminal. Both formats redact credentials before
 * anything is written: credential fields, and credentials written into URLs anywhere in a line.
 */
import { pino } from 'pino';
import type { DestinationStream, Logger } from 'pino';
import { maskUrlCredentials } from './url-credentials.js';

export type { Logger } from 'pino';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LoggerOptions {
  level: LogLevel;
  format: LogFormat;
  /** Where lines go; stderr by default. */
  destination?: { write(line: string): unknown };
  /** Colour the level in `pretty` lines; by default when the destination is stderr on a terminal. */
  color?: boolean;
}

export const REDACTED = '[redacted]';

/**
 * Fields that carry a credential wherever they appear in a record: HTTP auth headers (request and
 * response), token query parameters, and token, password and secret fields at the top level or
 * one level down.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["proxy-authorization"]',
  'req.headers.cookie',
  'req.headers["x-gitlab-token"]',
  'req.query.token',
  'req.query.access_token',
  'req.query.api_key',
  'req.query.key',
  'res.headers["set-cookie"]',
  'token',
  '*.token',
  'access_token',
  '*.access_token',
  'password',
  '*.password',
  'secret',
  '*.secret',
];

const SECRET_QUERY_PARAMS = /([?&](?:token|access_token|api_key|key)=)[^&#]*/gi;

/** A URL with the values of credential-carrying query parameters (`?token=…`) replaced. */
export function redactUrl(url: string): string {
  return url.replace(SECRET_QUERY_PARAMS, `$1${REDACTED}`);
}

export function createLogger(options: LoggerOptions): Logger {
  const toStderr = options.destination === undefined;
  const sink = options.destination ?? pino.destination({ fd: 2, sync: true });
  const color = options.color ?? (toStderr && process.stderr.isTTY === true);
  const destination: DestinationStream = options.format === 'json' ? sink : { write: (line: string) => sink.write(prettyLine(line, color)) };
  return pino({
    level: options.level,
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    // A credential written into a URL (a git source, an error quoting one) is masked wherever it appears in a line.
    hooks: { streamWrite: maskUrlCredentials },
    // Readable lines leave out what a person at the terminal already knows.
    ...(options.format === 'pretty' ? { base: undefined } : {}),
  }, destination);
}

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const LEVEL_COLORS: Record<number, string> = { 10: '90', 20: '36', 30: '32', 40: '33', 50: '31', 60: '35' };
const OMITTED = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'err']);

/** One pino JSON record as `HH:MM:SS.mmm LEVEL message key=value …`, then an error's stack. */
export function prettyLine(json: string, color = false): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const level = typeof record.level === 'number' ? record.level : 30;
  const name = (LEVEL_NAMES[level] ?? String(record.level)).padEnd(5);
  const shown = color ? `\x1b[${LEVEL_COLORS[level] ?? '0'}m${name}\x1b[0m` : name;
  const time = typeof record.time === 'number' ? new Date(record.time).toISOString().slice(11, 23) : '';
  const fields = Object.entries(record)
    .filter(([k]) => !OMITTED.has(k))
    .map(([k, v]) => ` ${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join('');
  const err = record.err as { stack?: unknown; message?: unknown } | undefined;
  const stack = err ? `\n    ${String(err.stack ?? err.message).replace(/\n/g, '\n    ')}` : '';
  return `${time} ${shown} ${String(record.msg ?? '')}${fields}${stack}\n`;
}
