/**
 * Claude.ai exports (docs/palace-behaviour.md §5.2): either one conversation (an object with `messages` or
 * `chat_messages`, or a bare list of messages) or the privacy export, a list of conversations
 * each with `chat_messages`. Messages name their author in `role` or `sender`.
 */
import { strip } from '../text.js';
import { renderContent } from './claude-code.js';
import { joinTranscripts, toTranscript } from './transcript.js';
import type { ChatMessage, ChatRole, ParsedChat } from './types.js';
import { isRecord } from './util.js';

function roleOf(value: unknown): ChatRole | null {
  if (value === 'user' || value === 'human') return 'user';
  if (value === 'assistant' || value === 'ai') return 'assistant';
  return null;
}

function conversationMessages(items: unknown): ChatMessage[] {
  if (!Array.isArray(items)) return [];
  const messages: ChatMessage[] = [];
  for (const item of items) {
    if (!isRecord(item)) continue;
    const role = roleOf(item.role ?? item.sender);
    if (role === null) continue;
    let text = renderContent(item.content, new Map());
    if (text === '' && typeof item.text === 'string') text = strip(item.text);
    if (text !== '') messages.push({ role, text });
  }
  return messages;
}

function messagesOf(conversation: Record<string, unknown>, preferChat: boolean): unknown {
  const [first, second] = preferChat ? ['chat_messages', 'messages'] : ['messages', 'chat_messages'];
  return conversation[first] ?? conversation[second];
}

export function parseClaudeAiJson(value: unknown): ParsedChat | null {
  const list = isRecord(value) ? (messagesOf(value, false) ?? []) : value;
  if (!Array.isArray(list)) return null;
  const first: unknown = list[0];
  if (isRecord(first) && ('chat_messages' in first || 'messages' in first)) {
    const transcripts: string[] = [];
    let messageCount = 0;
    for (const conversation of list) {
      if (!isRecord(conversation)) continue;
      const messages = conversationMessages(messagesOf(conversation, true));
      if (messages.length < 2) continue;
      transcripts.push(toTranscript(messages));
      messageCount += messages.length;
    }
    return transcripts.length > 0 ? { transcript: joinTranscripts(transcripts), messageCount } : null;
  }
  const messages = conversationMessages(list);
  return messages.length >= 2 ? { transcript: toTranscript(messages), messageCount: messages.length } : null;
}
