/**
 * Gemini CLI session logs (docs/palace-behaviour.md §5.2): a `session_metadata` entry opens the session (anything
 * before it is ignored); `user` and `gemini` entries carry `content` as a list of blocks whose
 * non-blank `text` parts form the message. Other entry types (`message_update`, …) are skipped.
 */
import { strip } from '../text.js';
import { toTranscript } from './transcript.js';
import type { ChatMessage, ParsedChat } from './types.js';
import { isRecord, jsonLines } from './util.js';

function blocksText(content: unknown): string {
  if (!Array.isArray(content)) return '';
  const texts = content
    .filter((b) => isRecord(b) && typeof b.text === 'string' && strip(b.text) !== '')
    .map((b) => (b as { text: string }).text);
  return strip(texts.join('\n'));
}

export function geminiMessages(content: string): ChatMessage[] | null {
  const entries = jsonLines(content);
  const start = entries.findIndex((e) => e.type === 'session_metadata');
  if (start < 0) return null;
  const messages: ChatMessage[] = [];
  for (const entry of entries.slice(start + 1)) {
    const role = entry.type === 'user' ? 'user' : entry.type === 'gemini' ? 'assistant' : null;
    if (role === null) continue;
    const text = blocksText(entry.content);
    if (text !== '') messages.push({ role, text });
  }
  return messages;
}

export function parseGeminiJsonl(content: string): ParsedChat | null {
  const messages = geminiMessages(content);
  return messages !== null && messages.length >= 2 ? { transcript: toTranscript(messages), messageCount: messages.length } : null;
}
