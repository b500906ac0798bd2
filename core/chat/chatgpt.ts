/**
 * ChatGPT exports (docs/palace-behaviour.md §5.2): a conversation object holds a `mapping` of nodes forming a tree;
 * the transcript follows the first child from the root (the first branch of every edit).
 *
 * Fix of the original's quirk: the file ChatGPT actually exports, `conversations.json`, is an
 * array of such objects. Each element is parsed and the transcripts joined with a blank line.
 */
import { strip } from '../text.js';
import { joinTranscripts, toTranscript } from './transcript.js';
import type { ChatMessage, ParsedChat } from './types.js';
import { isRecord, type JsonRecord } from './util.js';

function findRoot(mapping: JsonRecord): string | undefined {
  let firstParentless: string | undefined;
  for (const [id, node] of Object.entries(mapping)) {
    if (!isRecord(node) || (node.parent !== null && node.parent !== undefined)) continue;
    if (node.message === null || node.message === undefined) return id;
    firstParentless ??= id;
  }
  return firstParentless;
}

function nodeMessage(node: JsonRecord): ChatMessage | null {
  const message = node.message;
  if (!isRecord(message)) return null;
  const role = isRecord(message.author) ? message.author.role : undefined;
  if (role !== 'user' && role !== 'assistant') return null;
  const parts = isRecord(message.content) ? message.content.parts : undefined;
  if (!Array.isArray(parts)) return null;
  const text = strip(parts.filter((p): p is string => typeof p === 'string').join(' '));
  return text === '' ? null : { role, text };
}

export function chatGptMessages(conversation: unknown): ChatMessage[] {
  if (!isRecord(conversation) || !isRecord(conversation.mapping)) return [];
  const mapping = conversation.mapping;
  const messages: ChatMessage[] = [];
  const visited = new Set<string>();
  let id = findRoot(mapping);
  while (id !== undefined && !visited.has(id)) {
    visited.add(id);
    const node = mapping[id];
    if (!isRecord(node)) break;
    const message = nodeMessage(node);
    if (message !== null) messages.push(message);
    const children = node.children;
    id = Array.isArray(children) && typeof children[0] === 'string' ? children[0] : undefined;
  }
  return messages;
}

export function parseChatGptJson(value: unknown): ParsedChat | null {
  const conversations = Array.isArray(value) ? value : [value];
  const transcripts: string[] = [];
  let messageCount = 0;
  for (const conversation of conversations) {
    const messages = chatGptMessages(conversation);
    if (messages.length < 2) continue;
    transcripts.push(toTranscript(messages));
    messageCount += messages.length;
  }
  return transcripts.length > 0 ? { transcript: joinTranscripts(transcripts), messageCount } : null;
}
