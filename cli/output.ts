/**
 * How the CLI prints: JSON on stdout with `--json`, readable tables otherwise; errors are
 * structured on stderr and set the exit code (2 for bad input, 1 otherwise).
 */
import Table from 'cli-table3';
import { isPalaceError } from '../core/errors.js';

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

export function reportError(e: unknown, json: boolean): number {
  const payload = isPalaceError(e) ? e.toJSON() : e instanceof ToolFailed ? e.result : { error: e instanceof Error ? e.message : String(e), code: 'internal' };
  if (json) process.stdout.write(`${JSON.stringify(payload, null, 2)}\n`);
  else {
    const where = isPalaceError(e) && e.field ? ` (field: ${e.field}${e.rule ? `, rule: ${e.rule}` : ''})` : '';
    process.stderr.write(`error: ${String(payload.error)}${where}\n`);
  }
  return isPalaceError(e) && e.code === 'invalid_argument' ? 2 : 1;
}
