/**
 * How the CLI prints: JSON on stdout with `--json`, readable tables otherwise; errors are
 * structured on stderr and set the exit code (2 for bad input, 75 when a retry can help, 1
 * otherwise).
 */
import Table from 'cli-table3';
import type { ErrorCode } from '../core/errors.js';
import { asPalaceError } from '../core/errors.js';

/** A tool answered with its own failure shape (`{error}` or `{success: false, error}`). */
export class ToolFailed extends Error {
  constructor(readonly result: Record<string, unknown>) {
    super(typeof result.error === 'string' ? result.error : 'the tool call failed');
  }
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function table(head: string[], rows: (string | number)[][], colWidths?: number[]): string {
  const t = new Table({ head, style: { head: [], border: [] }, wordWrap: true, ...(colWidths ? { colWidths } : {}) });
  t.push(...rows.map((r) => r.map(String)));
  return t.toString();
}

/** EX_TEMPFAIL of sysexits.h: the failure is temporary, the same command may succeed later. */
export const RETRY_EXIT_CODE = 75;

/**
 * The exit code of a failed command: 2 for bad input, 75 when a retry can help, else 1. A tool's
 * own failure shape names no code; its `retryable` field still counts.
 */
export function exitCodeOf({ code, retryable }: { code: ErrorCode | undefined; retryable: boolean }): number {
  if (code === 'invalid_argument') return 2;
  return retryable ? RETRY_EXIT_CODE : 1;
}

export function reportError(e: unknown, json: boolean): number {
  const error = e instanceof ToolFailed ? undefined : asPalaceError(e);
  const payload = error ? error.toJSON() : (e as ToolFailed).result;
  if (json) process.stdout.write(`${JSON.stringify(payload, null, 2)}\n`);
  else {
    const where = error?.field ? ` (field: ${error.field}${error.rule ? `, rule: ${error.rule}` : ''})` : '';
    process.stderr.write(`error: ${String(payload.error)}${where}\n`);
  }
  return exitCodeOf(error ?? { code: undefined, retryable: payload.retryable === true });
}
