/**
 * Opaque resume cursors over (wing, source_file) orderings: base64url of a JSON pair, so any
 * character in a path survives and a caller cannot mistake the cursor for a path.
 */
import { invalidArgument } from '../../../core/errors.js';

export function encodeCursor(wing: string, sourceFile: string): string {
  return Buffer.from(JSON.stringify([wing, sourceFile]), 'utf8').toString('base64url');
}

export function decodeCursor(field: string, cursor: string): [string, string] {
  let pair: unknown;
  try {
    pair = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    pair = undefined;
  }
  if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') {
    throw invalidArgument(field, 'cursor_format', `${field} is not a cursor returned by this listing`);
  }
  return [pair[0], pair[1]];
}

/** The first `limit` of `rows` (which holds up to limit + 1), with a cursor when more follow. */
export function pageWithCursor<T>(rows: T[], limit: number, cursorOf: (row: T) => string): { items: T[]; next?: string } {
  if (rows.length <= limit) return { items: rows };
  const items = rows.slice(0, limit);
  return { items, next: cursorOf(items[items.length - 1]!) };
}
