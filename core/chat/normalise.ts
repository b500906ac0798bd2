/**
 * Conversation normalisation (docs/palace-behaviour.md §5.2): decode a chat export, recognise its format and render
 * it as a transcript (`> ` user turns, verbatim answers, blank line between exchanges).
 * Pure over the file's bytes; the caller reads the file and applies the docs/palace-behaviour.md §5.1 file filters.
 */
import { PalaceError } from '../errors.js';
import { strip } from '../text.js';
import { parseChatGptJson } from './chatgpt.js';
import { parseClaudeAiJson } from './claude-ai.js';
import { parseClaudeCodeJsonl } from './claude-code.js';
import { parseCodexJsonl } from './codex.js';
import { parseGeminiJsonl } from './gemini.js';
import { isQuotedTranscript } from './plain-text.js';
import { parseSlackJson } from './slack.js';
import type { ChatFormat, NormalisedConversation, NormaliseNote, ParsedChat } from './types.js';

/** Conversation files above this size are refused (docs/palace-behaviour.md §5.1, §5.2). */
export const MAX_CONVERSATION_BYTES = 500 * 1024 * 1024;

const JSONL_PARSERS: readonly [ChatFormat, (content: string) => ParsedChat | null][] = [
  ['claude-code-jsonl', parseClaudeCodeJsonl],
  ['codex-jsonl', parseCodexJsonl],
  ['gemini-jsonl', parseGeminiJsonl],
];

const JSON_PARSERS: readonly [ChatFormat, (value: unknown) => ParsedChat | null][] = [
  ['claude-ai-json', parseClaudeAiJson],
  ['chatgpt-json', parseChatGptJson],
  ['slack-json', parseSlackJson],
];

/** UTF-8 with replacement, as the original reads; reports whether anything was replaced. */
export function decodeConversation(bytes: Uint8Array): { text: string; replaced: boolean } {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), replaced: false };
  } catch {
    return { text: new TextDecoder('utf-8').decode(bytes), replaced: true };
  }
}

function extensionOf(fileName: string): string {
  const base = fileName.slice(Math.max(fileName.lastIndexOf('/'), fileName.lastIndexOf('\\')) + 1);
  const dot = base.lastIndexOf('.');
  return dot <= 0 ? '' : base.slice(dot).toLowerCase();
}

function parseJson(content: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(content) as unknown };
  } catch {
    return { ok: false };
  }
}

/**
 * Normalise one conversation file. `input` is the file's bytes (or already-decoded text);
 * `fileName` supplies the extension that makes the JSON parsers run. Throws a `too_large`
 * PalaceError above 500 MiB; every other input yields a transcript (unknown or broken JSON is
 * filed as plain text, noted as `json-not-recognised`).
 */
export function normaliseConversation(input: Uint8Array | string, fileName: string): NormalisedConversation {
  const byteLength = typeof input === 'string' ? Buffer.byteLength(input, 'utf8') : input.byteLength;
  if (byteLength > MAX_CONVERSATION_BYTES) {
    throw new PalaceError('too_large', `conversation file is ${byteLength} bytes, over the ${MAX_CONVERSATION_BYTES}-byte limit`, {
      field: 'source_file',
      rule: 'max_bytes',
      details: { file: fileName, bytes: byteLength, limit: MAX_CONVERSATION_BYTES },
    });
  }
  const notes: NormaliseNote[] = [];
  let content: string;
  if (typeof input === 'string') {
    content = input;
  } else {
    const decoded = decodeConversation(input);
    content = decoded.text;
    if (decoded.replaced) notes.push('invalid-utf8-replaced');
  }

  const trimmed = strip(content);
  if (trimmed === '') return { format: 'empty', transcript: content, messageCount: 0, notes };
  if (isQuotedTranscript(content)) return { format: 'quoted-transcript', transcript: content, messageCount: 0, notes };

  const extension = extensionOf(fileName);
  if (extension === '.json' || extension === '.jsonl' || trimmed.startsWith('{') || trimmed.startsWith('[')) {
    for (const [format, parse] of JSONL_PARSERS) {
      const parsed = parse(content);
      if (parsed !== null) return { format, ...parsed, notes };
    }
    const whole = parseJson(content);
    if (whole.ok) {
      for (const [format, parse] of JSON_PARSERS) {
        const parsed = parse(whole.value);
        if (parsed !== null) return { format, ...parsed, notes };
      }
    }
    notes.push('json-not-recognised');
  }
  return { format: 'plain-text', transcript: content, messageCount: 0, notes };
}
