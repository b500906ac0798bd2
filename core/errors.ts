/**
 * Structured errors shared by every layer. A `PalaceError` names what went wrong (`code`), the
 * input field and the rule it broke when the caller is at fault, and whether retrying can help.
 * Transports map it once, each in one function of (code, retryable): MCP to a tool-level error or
 * JSON-RPC error (mcp/results.ts), REST to a status code and Retry-After (api/errors.ts), Temporal
 * to a retryable or non-retryable failure (jobs/engines/temporal/activities.ts), the CLI to an exit
 * code (cli/output.ts).
 */
export const ERROR_CODES = [
  'invalid_argument',
  'not_found',
  'already_exists',
  'already_running',
  'conflict',
  'too_large',
  'permission_denied',
  'read_only',
  'unauthenticated',
  'rate_limited',
  'no_palace',
  'store_unavailable',
  'stale_lease',
  'cancelled',
  'internal',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * What every transport's mapping of an error reads, and nothing else: its code and whether a
 * retry can help. `retryable` is the one input of every retry decision (MCP, REST, Temporal, CLI).
 */
export type ErrorKind = Pick<PalaceError, 'code' | 'retryable'>;

export interface PalaceErrorInit {
  field?: string | undefined;
  rule?: string | undefined;
  retryable?: boolean | undefined;
  store?: string | undefined;
  details?: Record<string, unknown> | undefined;
  cause?: unknown;
}

export class PalaceError extends Error {
  readonly code: ErrorCode;
  readonly field: string | undefined;
  readonly rule: string | undefined;
  readonly retryable: boolean;
  readonly store: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, init: PalaceErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'PalaceError';
    this.code = code;
    this.field = init.field;
    this.rule = init.rule;
    this.retryable = init.retryable ?? code === 'store_unavailable';
    this.store = init.store;
    this.details = init.details;
  }

  /** The JSON shape every transport returns for this error. */
  toJSON(): Record<string, unknown> {
    return {
      error: this.message,
      code: this.code,
      ...(this.field === undefined ? {} : { field: this.field }),
      ...(this.rule === undefined ? {} : { rule: this.rule }),
      ...(this.store === undefined ? {} : { store: this.store }),
      retryable: this.retryable,
      ...(this.details ?? {}),
    };
  }
}

/** Bad caller input: names the field and the rule it broke. */
export function invalidArgument(field: string, rule: string, message: string, details?: Record<string, unknown>): PalaceError {
  return new PalaceError('invalid_argument', message, { field, rule, details });
}

/** A store (SQLite, OpenSearch, Neo4j, Redis, Temporal) could not serve the call; retryable. */
export function storeUnavailable(store: string, cause: unknown): PalaceError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new PalaceError('store_unavailable', `${store} is unavailable: ${reason}`, { store, retryable: true, cause });
}

export function notFound(what: string, id: string): PalaceError {
  return new PalaceError('not_found', `${what} not found: ${id}`, { details: { id } });
}

export function isPalaceError(e: unknown): e is PalaceError {
  return e instanceof PalaceError;
}

/** Any failure as a PalaceError: PalaceErrors pass, anything else is an `internal` error with its message. */
export function asPalaceError(e: unknown): PalaceError {
  if (isPalaceError(e)) return e;
  return new PalaceError('internal', e instanceof Error ? e.message : String(e), { cause: e });
}
