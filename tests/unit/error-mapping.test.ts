/**
 * Every error code × retryable true/false through the four mappings, each called the way its
 * layer calls it: the MCP tool-level result (or JSON-RPC -32000), the REST status and Retry-After
 * from a real Express app with the API's error handler, the Temporal activity failure's
 * `nonRetryable`, and the CLI exit code. `EXPECTED` is a Record over ErrorCode, so a new code
 * does not compile until its row is written here.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { ApplicationFailure } from '@temporalio/activity';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { errorHandler } from '../../api/errors.js';
import { exitCodeOf, reportError, ToolFailed } from '../../cli/output.js';
import type { ErrorCode } from '../../core/errors.js';
import { ERROR_CODES, PalaceError, asPalaceError } from '../../core/errors.js';
import { TOOLS } from '../../mcp/registry.js';
import { toolFailure, wrapResult } from '../../mcp/results.js';
import { toFailure } from '../../jobs/engines/temporal/activities.js';
import { quietLogger } from '../helpers/log.js';

interface Row {
  /** A tool-level result the model sees, or a JSON-RPC -32000 error. */
  mcp: 'tool' | 'rpc';
  status: number;
}

const EXPECTED: Record<ErrorCode, Row> = {
  invalid_argument: { mcp: 'tool', status: 400 },
  not_found: { mcp: 'tool', status: 404 },
  already_exists: { mcp: 'tool', status: 409 },
  already_running: { mcp: 'tool', status: 409 },
  conflict: { mcp: 'tool', status: 409 },
  too_large: { mcp: 'tool', status: 413 },
  permission_denied: { mcp: 'tool', status: 403 },
  read_only: { mcp: 'rpc', status: 403 },
  unauthenticated: { mcp: 'rpc', status: 401 },
  rate_limited: { mcp: 'rpc', status: 429 },
  no_palace: { mcp: 'tool', status: 404 },
  store_unavailable: { mcp: 'tool', status: 503 },
  stale_lease: { mcp: 'tool', status: 409 },
  cancelled: { mcp: 'rpc', status: 409 },
  internal: { mcp: 'rpc', status: 500 },
};

const CASES = ERROR_CODES.flatMap((code) => [true, false].map((retryable) => ({ code, retryable })));
const errorOf = (code: ErrorCode, retryable: boolean) => new PalaceError(code, `a ${code} failure`, { retryable, store: 'neo4j' });

let server: Server;
let base: string;

beforeAll(async () => {
  const app = express();
  app.get('/fail/:code/:retryable', (req) => {
    throw errorOf(req.params.code as ErrorCode, req.params.retryable === 'true');
  });
  app.use(errorHandler({ onStoreError: () => undefined, log: quietLogger() }));
  server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('error mapping: every code × retryable', () => {
  it('the list of codes is the ErrorCode union, each once', () => {
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
    expect([...ERROR_CODES].sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  const byShape = (['error', 'success_false'] as const).map((shape) => TOOLS.find((t) => t.errorShape === shape)!);

  it.each(CASES)('MCP: $code, retryable $retryable', ({ code, retryable }) => {
    for (const tool of byShape) {
      const failure = toolFailure(tool, errorOf(code, retryable));
      if (EXPECTED[code].mcp === 'rpc') {
        expect(failure).toBeUndefined();
        continue;
      }
      const result = wrapResult(failure);
      expect(result.isError).toBe(true);
      const payload = result.structuredContent!;
      expect(typeof payload.error).toBe('string');
      if (tool.errorShape === 'success_false') expect(payload.success).toBe(false);
      // Said whenever a retry can help, and always for a store error (outage vs configuration fault).
      if (retryable) expect(payload.retryable).toBe(true);
      else if (code === 'store_unavailable') expect(payload.retryable).toBe(false);
      else expect(payload).not.toHaveProperty('retryable');
    }
  });

  it.each(CASES)('REST: $code, retryable $retryable', async ({ code, retryable }) => {
    const res = await fetch(`${base}/fail/${code}/${retryable}`);
    expect(res.status).toBe(EXPECTED[code].status);
    expect(res.headers.get('retry-after')).toBe(retryable ? '5' : null);
    expect(await res.json()).toMatchObject({ code, retryable, error: `a ${code} failure` });
  });

  it.each(CASES)('Temporal: $code, retryable $retryable', ({ code, retryable }) => {
    const failure = toFailure(errorOf(code, retryable));
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).type).toBe(code);
    expect((failure as ApplicationFailure).nonRetryable).toBe(!retryable);
  });

  it.each(CASES)('CLI: $code, retryable $retryable', ({ code, retryable }) => {
    expect(exitCodeOf(errorOf(code, retryable))).toBe(code === 'invalid_argument' ? 2 : retryable ? 75 : 1);
  });
});

describe('error mapping: the inputs', () => {
  it('only store_unavailable is retryable unless the thrower says otherwise', () => {
    for (const code of ERROR_CODES) expect(new PalaceError(code, 'x').retryable).toBe(code === 'store_unavailable');
  });

  it('a rate limit names its own Retry-After', async () => {
    const app = express();
    app.get('/', () => {
      throw new PalaceError('rate_limited', 'slow down', { retryable: true, details: { retry_after_s: 3 } });
    });
    app.use(errorHandler({ onStoreError: () => undefined, log: quietLogger() }));
    const limited = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => limited.once('listening', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(limited.address() as AddressInfo).port}/`);
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('3');
      expect(await res.json()).toEqual({ error: 'slow down', code: 'rate_limited', retryable: true, retry_after_s: 3 });
    } finally {
      await new Promise<void>((resolve) => limited.close(() => resolve()));
    }
  });

  it('anything that is not a PalaceError is internal and not retryable', () => {
    expect(asPalaceError(new TypeError('boom')).toJSON()).toEqual({ error: 'boom', code: 'internal', retryable: false });
    // Temporal gets a plain error as it is, retried by the policy.
    const plain = new Error('plain');
    expect(toFailure(plain)).toBe(plain);
  });

  it('the CLI reports a tool failure (no code) as 75 when it says retryable, else 1; an unknown error as 1', () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(reportError(new ToolFailed({ error: 'neo4j is unavailable: ECONNREFUSED', retryable: true, store: 'neo4j' }), false)).toBe(75);
      expect(reportError(new ToolFailed({ error: 'neo4j is unavailable: unauthorized', retryable: false, store: 'neo4j' }), false)).toBe(1);
      expect(reportError(new ToolFailed({ success: false, error: 'no such wing' }), false)).toBe(1);
      expect(reportError(new TypeError('boom'), false)).toBe(1);
      expect(reportError(errorOf('invalid_argument', false), false)).toBe(2);
      expect(stderr.mock.calls.map(([line]) => String(line))).toEqual([
        'error: neo4j is unavailable: ECONNREFUSED\n',
        'error: neo4j is unavailable: unauthorized\n',
        'error: no such wing\n',
        'error: boom\n',
        'error: a invalid_argument failure\n',
      ]);
    } finally {
      stderr.mockRestore();
    }
  });
});
