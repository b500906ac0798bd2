/**
 * Codex CLI session logs (`~/.codex/sessions/.../rollout-*.jsonl`, docs/palace-behaviour.md §5.2). Only
 * `event_msg` entries of type `user_message`/`agent_message` are read; `response_item` entries
 * repeat the same turns and carry injected context, so they are ignored.
 */
import { strip } from '../text.js';
import { toTranscript } from './transcript.js';
import type { ChatMessage, ParsedChat } from './types.js';
import { isRecord, jsonLines } from './util.js';

export function codexMessages(content: string): ChatMessage[] | null {
  const entries = jsonLines(content);
  if (!entries.some((e) => e.type === 'session_meta')) return null;
  const messages: ChatMessage[] = [];
  for (const entry of entries) {
    if (entry.type !== 'event_msg' || !isRecord(entry.payload)) continue;
    const { type, message } = entry.payload;
    if (typeof message !== 'string') continue;
    const text = strip(message);
    if (text === '') continue;
    if (type === 'user_message') messages.push({ role: 'user', text });
    else if (type === 'agent_message') messages.push({ role: 'assistant', text });
  }
  return messages;
}

export function parseCodexJsonl(content: string): ParsedChat | null {
  const messages = codexMessages(content);
  return messages !== null && messages.length >= 2 ? { transcript: toTranscript(messages), messageCount: messages.length } : null;
}
