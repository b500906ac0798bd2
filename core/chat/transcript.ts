/**
 * Transcript rendering (docs/palace-behaviour.md §5.4): each user turn is quoted with `> `, the assistant's reply
 * follows it verbatim, and a blank line closes the exchange.
 *
 * Fixes of the original's quirks (docs/palace-behaviour.md §5.4, §15):
 * - User text is never altered (no spell-correction).
 * - Every line of a multi-line user turn is quoted (`> `, or a bare `>` for a blank line), so its
 *   later lines no longer leak into the answer; the chunkers treat a run of quoted lines as one
 *   turn.
 */
import type { ChatMessage } from './types.js';

export function quoteUserText(text: string): string {
  return text
    .split('\n')
    .map((line) => (line === '' ? '>' : `> ${line}`))
    .join('\n');
}

export function toTranscript(messages: readonly ChatMessage[]): string {
  const out: string[] = [];
  let i = 0;
  while (i < messages.length) {
    const message = messages[i]!;
    if (message.role === 'user') {
      out.push(quoteUserText(message.text));
      const next = messages[i + 1];
      if (next !== undefined && next.role === 'assistant') {
        out.push(next.text);
        i += 2;
      } else {
        i += 1;
      }
    } else {
      out.push(message.text);
      i += 1;
    }
    out.push('');
  }
  return out.join('\n');
}

/** Several conversations of one export, each rendered, separated by one blank line. */
export function joinTranscripts(transcripts: readonly string[]): string {
  return transcripts.join('\n');
}
