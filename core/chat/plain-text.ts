/**
 * Plain text and ready-made transcripts (docs/palace-behaviour.md §5.2 steps 3 and 5): a text with at least three
 * `>`-quoted lines is already a transcript; any other text is filed as it is and chunked by
 * paragraph.
 */
import { lstrip } from './util.js';

export const QUOTED_TRANSCRIPT_MIN_LINES = 3;

export function quotedLineCount(lines: readonly string[]): number {
  let count = 0;
  for (const line of lines) if (lstrip(line).startsWith('>')) count++;
  return count;
}

export function isQuotedTranscript(content: string): boolean {
  return quotedLineCount(content.split('\n')) >= QUOTED_TRANSCRIPT_MIN_LINES;
}
