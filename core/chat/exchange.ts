/**
 * Exchange chunking (docs/palace-behaviour.md §5.5, `extract = exchange`): one drawer per question and its answer,
 * cut into `chunkSize`-code-point slices when longer; text without enough quoted turns is chunked
 * by paragraph.
 *
 * Fixes of the original's quirks (docs/palace-behaviour.md §5.5, §15, docs/decisions.md palace 4), so nothing is lost:
 * - answer lines keep their line breaks and indentation (joined with `\n`, not spaces);
 * - a `---` line is part of the answer instead of ending the exchange and dropping what follows;
 * - text before the first quoted line is filed as its own unit;
 * - a run of consecutive quoted lines is one user turn (see `toTranscript`).
 */
import { codePointLength, strip } from '../text.js';
import { quotedLineCount, QUOTED_TRANSCRIPT_MIN_LINES } from './plain-text.js';
import type { ChunkLimits, ConversationChunk } from './types.js';
import { DEFAULT_CONVERSATION_LIMITS } from './types.js';
import { codePointSlices, lstrip } from './util.js';

const PARAGRAPH_FALLBACK_MIN_NEWLINES = 20;
const LINE_GROUP_SIZE = 25;

/** Collects units into chunks: drops units at or under the floor, slices long ones. */
class ChunkSink {
  readonly chunks: ConversationChunk[] = [];
  constructor(private readonly limits: ChunkLimits) {}

  emit(unit: string): void {
    if (codePointLength(strip(unit)) <= this.limits.minChunkSize) return;
    for (const content of codePointSlices(unit, this.limits.chunkSize)) {
      this.chunks.push({ content, chunkIndex: this.chunks.length });
    }
  }
}

function isQuoted(line: string): boolean {
  return lstrip(line).startsWith('>');
}

function byExchange(lines: readonly string[], sink: ChunkSink): void {
  let i = 0;
  const preamble: string[] = [];
  while (i < lines.length && !isQuoted(lines[i]!)) preamble.push(lines[i++]!);
  const preambleText = strip(preamble.join('\n'));
  if (preambleText !== '') sink.emit(preambleText);

  while (i < lines.length) {
    const question: string[] = [];
    while (i < lines.length && isQuoted(lines[i]!)) question.push(lines[i++]!);
    const answer: string[] = [];
    while (i < lines.length && !isQuoted(lines[i]!)) answer.push(lines[i++]!);
    sink.emit(exchangeUnit(question.join('\n'), answer.join('\n')));
  }
}

/** One exchange as filed: the quoted question, then the answer on the next line. */
export function exchangeUnit(quotedQuestion: string, answer: string): string {
  const user = strip(quotedQuestion);
  const reply = strip(answer);
  return reply === '' ? user : `${user}\n${reply}`;
}

/**
 * Chunks of exchanges given one by one (the agent hooks file a session's new exchanges this way):
 * each unit goes through the same floor and slicing as a mined file; `unit` tells which input
 * unit a chunk came from.
 */
export function chunkExchangeUnits(units: readonly string[], limits: ChunkLimits = DEFAULT_CONVERSATION_LIMITS): (ConversationChunk & { unit: number })[] {
  const out: (ConversationChunk & { unit: number })[] = [];
  units.forEach((unit, i) => {
    const sink = new ChunkSink(limits);
    sink.emit(unit);
    for (const c of sink.chunks) out.push({ ...c, unit: i });
  });
  return out;
}

function newlineCount(text: string): number {
  let n = 0;
  for (const ch of text) if (ch === '\n') n++;
  return n;
}

/** Paragraphs of a text, or groups of 25 lines when it has one long paragraph (docs/palace-behaviour.md §5.5). */
export function paragraphUnits(text: string, newlineThreshold: (text: string) => boolean): string[] {
  const paragraphs = text.split('\n\n').map(strip).filter((p) => p !== '');
  if (paragraphs.length <= 1 && newlineThreshold(text)) {
    const lines = text.split('\n');
    const groups: string[] = [];
    for (let k = 0; k < lines.length; k += LINE_GROUP_SIZE) groups.push(strip(lines.slice(k, k + LINE_GROUP_SIZE).join('\n')));
    return groups;
  }
  return paragraphs;
}

export function chunkExchanges(transcript: string, limits: ChunkLimits = DEFAULT_CONVERSATION_LIMITS): ConversationChunk[] {
  const sink = new ChunkSink(limits);
  const lines = transcript.split('\n');
  if (quotedLineCount(lines) >= QUOTED_TRANSCRIPT_MIN_LINES) {
    byExchange(lines, sink);
  } else {
    for (const unit of paragraphUnits(transcript, (t) => newlineCount(t) > PARAGRAPH_FALLBACK_MIN_NEWLINES)) sink.emit(unit);
  }
  return sink.chunks;
}
