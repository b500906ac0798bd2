/** Small helpers shared by the chat normalisers and chunkers. */
import { strip } from '../text.js';

export type JsonRecord = Record<string, unknown>;

export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The JSON objects of a JSONL text; blank and invalid lines are skipped, as the spec says. */
export function jsonLines(content: string): JsonRecord[] {
  const entries: JsonRecord[] = [];
  for (const line of content.split('\n')) {
    const trimmed = strip(line);
    if (trimmed === '') continue;
    try {
      const value: unknown = JSON.parse(trimmed);
      if (isRecord(value)) entries.push(value);
    } catch {
      // Invalid lines are skipped (docs/palace-behaviour.md §5.2); a truncated last line is the usual case.
    }
  }
  return entries;
}

/** Consecutive `size`-code-point slices of `text` (no overlap, no stripping). */
export function codePointSlices(text: string, size: number): string[] {
  const points = Array.from(text);
  const slices: string[] = [];
  for (let k = 0; k < points.length; k += size) slices.push(points.slice(k, k + size).join(''));
  return slices;
}

/** Python's `str.lstrip()` (Unicode whitespace). */
export function lstrip(s: string): string {
  return s.replace(/^\s+/u, '');
}
