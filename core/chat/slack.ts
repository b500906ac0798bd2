/**
 * Slack channel exports (docs/palace-behaviour.md §5.2): a JSON array of message objects. Slack has no
 * user/assistant roles, so roles alternate by speaker to keep exchange chunking working, and a
 * footer says so.
 */
import { strip } from '../text.js';
import { toTranscript } from './transcript.js';
import type { ChatMessage, ChatRole, ParsedChat } from './types.js';
import { isRecord } from './util.js';

export const SLACK_PROVENANCE_FOOTER = '[source: slack-export | multi-party chat — speaker roles are positional, not verified]';

/** Speaker ids go inside `[...]`, so brackets, line breaks and control characters are replaced. */
export function sanitiseSpeaker(id: string): string {
  let out = '';
  for (const ch of id) out += ch === '[' || ch === ']' || ch.charCodeAt(0) < 0x20 ? '_' : ch;
  return strip(out);
}

export function slackMessages(value: unknown): ChatMessage[] {
  if (!Array.isArray(value)) return [];
  const messages: ChatMessage[] = [];
  const roles = new Map<string, ChatRole>();
  for (const item of value) {
    if (!isRecord(item) || item.type !== 'message') continue;
    const rawSpeaker = typeof item.user === 'string' && item.user !== '' ? item.user : item.username;
    const speaker = typeof rawSpeaker === 'string' ? sanitiseSpeaker(rawSpeaker) : '';
    const text = typeof item.text === 'string' ? strip(item.text) : '';
    if (speaker === '' || text === '') continue;
    let role = roles.get(speaker);
    if (role === undefined) {
      const previous = messages[messages.length - 1];
      role = previous === undefined ? 'user' : previous.role === 'user' ? 'assistant' : 'user';
      roles.set(speaker, role);
    }
    messages.push({ role, text: `[${speaker}] ${text}` });
  }
  return messages;
}

export function parseSlackJson(value: unknown): ParsedChat | null {
  const messages = slackMessages(value);
  if (messages.length < 2) return null;
  return { transcript: `${toTranscript(messages)}\n${SLACK_PROVENANCE_FOOTER}`, messageCount: messages.length };
}
