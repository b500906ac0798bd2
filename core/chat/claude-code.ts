/**
 * Claude Code session logs (`~/.claude/projects/<project>/<session>.jsonl`, docs/palace-behaviour.md §5.2): one JSON
 * object per line; `user`/`human` and `assistant` entries carry `message.content` as a string,
 * a list of blocks, or an object with `text`. Tool calls are summarised to one line and tool
 * results are trimmed: they are tool chrome, not conversation (docs/palace-behaviour.md §15).
 */
import { codePointLength, codePointSlice, strip } from '../text.js';
import { stripNoise } from './noise.js';
import { toTranscript } from './transcript.js';
import type { ChatMessage, ParsedChat } from './types.js';
import { isRecord, jsonLines, type JsonRecord } from './util.js';

/** tool_use id → tool name, collected from assistant entries so results can be rendered by tool. */
export type ToolNames = Map<string, string>;

const CALL_SUMMARY_LIMIT = 200;
const BASH_HEAD_TAIL = 20;
const BASH_MAX_LINES = 40;
const SEARCH_MAX_LINES = 20;
const OTHER_RESULT_LIMIT = 2048;

function cut(text: string, limit: number): string {
  return codePointLength(text) > limit ? `${codePointSlice(text, 0, limit)}...` : text;
}

function str(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function isNumeric(value: unknown): value is number | string {
  if (typeof value === 'number') return Number.isInteger(value);
  return typeof value === 'string' && /^-?\d+$/.test(value.trim());
}

/** One line summarising a tool call. */
export function renderToolUse(name: string, input: JsonRecord): string {
  switch (name) {
    case 'Bash':
      return `[Bash] ${cut(str(input.command), CALL_SUMMARY_LIMIT)}`;
    case 'Read': {
      const path = str(input.file_path);
      const { offset, limit } = input;
      if (offset === undefined || offset === null || limit === undefined || limit === null) return `[Read ${path}]`;
      if (isNumeric(offset) && isNumeric(limit)) {
        const start = Number(offset);
        return `[Read ${path}:${start}-${start + Number(limit)}]`;
      }
      return `[Read ${path}:${str(offset)}+${str(limit)}]`;
    }
    case 'Grep':
      return `[Grep] ${str(input.pattern)} in ${str(input.path) || str(input.glob)}`;
    case 'Glob':
      return `[Glob] ${str(input.pattern)}`;
    case 'Edit':
    case 'Write':
      return `[${name} ${str(input.file_path)}]`;
    default:
      return `[${name}] ${cut(JSON.stringify(input), CALL_SUMMARY_LIMIT)}`;
  }
}

function toolResultText(content: unknown): string {
  if (typeof content === 'string') return strip(content);
  if (Array.isArray(content)) {
    const texts = content.filter((b) => isRecord(b) && b.type === 'text' && typeof b.text === 'string').map((b) => (b as JsonRecord).text as string);
    return strip(texts.join('\n'));
  }
  return '';
}

/** A tool result trimmed by the tool that produced it; `''` when it is omitted. */
export function renderToolResult(toolName: string, content: unknown): string {
  const text = toolResultText(content);
  if (text === '') return '';
  switch (toolName) {
    case 'Read':
    case 'Edit':
    case 'Write':
      return '';
    case 'Bash': {
      const lines = text.split('\n');
      if (lines.length > BASH_MAX_LINES) {
        const omitted = lines.length - 2 * BASH_HEAD_TAIL;
        return [
          ...lines.slice(0, BASH_HEAD_TAIL).map((l) => `→ ${l}`),
          `→ ... [${omitted} lines omitted] ...`,
          ...lines.slice(-BASH_HEAD_TAIL).map((l) => `→ ${l}`),
        ].join('\n');
      }
      return lines.map((l) => `→ ${l}`).join('\n');
    }
    case 'Grep':
    case 'Glob': {
      const lines = text.split('\n');
      const shown = lines.slice(0, SEARCH_MAX_LINES).map((l) => `→ ${l}`);
      if (lines.length > SEARCH_MAX_LINES) shown.push(`→ ... [${lines.length - SEARCH_MAX_LINES} more matches]`);
      return shown.join('\n');
    }
    default: {
      const length = codePointLength(text);
      if (length <= OTHER_RESULT_LIMIT) return `→ ${text}`;
      return `→ ${codePointSlice(text, 0, OTHER_RESULT_LIMIT)}... [truncated, ${length} chars]`;
    }
  }
}

function renderBlock(block: unknown, toolNames: ToolNames): string {
  if (typeof block === 'string') return block;
  if (!isRecord(block)) return '';
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? block.text : '';
    case 'tool_use':
      return renderToolUse(str(block.name) || 'Unknown', isRecord(block.input) ? block.input : {});
    case 'tool_result': {
      const id = typeof block.tool_use_id === 'string' ? block.tool_use_id : '';
      return renderToolResult(toolNames.get(id) ?? 'Unknown', block.content);
    }
    default:
      return '';
  }
}

/** Text of a message's `content` (string, list of blocks, or object with `text`). */
export function renderContent(content: unknown, toolNames: ToolNames): string {
  if (typeof content === 'string') return strip(content);
  if (Array.isArray(content)) {
    return strip(content.map((b) => renderBlock(b, toolNames)).filter((t) => t !== '').join('\n'));
  }
  if (isRecord(content) && typeof content.text === 'string') return strip(content.text);
  return '';
}

function isToolResultOnly(content: unknown): content is unknown[] {
  return Array.isArray(content) && content.length > 0 && content.every((b) => isRecord(b) && b.type === 'tool_result');
}

function recordToolUses(content: unknown, toolNames: ToolNames): void {
  if (!Array.isArray(content)) return;
  for (const block of content) {
    if (isRecord(block) && block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string') {
      toolNames.set(block.id, block.name);
    }
  }
}

export function claudeCodeMessages(content: string): ChatMessage[] {
  const messages: ChatMessage[] = [];
  const toolNames: ToolNames = new Map();
  for (const entry of jsonLines(content)) {
    const type = entry.type;
    const message = isRecord(entry.message) ? entry.message : {};
    const body = message.content;
    if (type === 'user' || type === 'human') {
      if (isToolResultOnly(body)) {
        // Tool output belongs to the assistant turn that asked for it.
        const results = renderContent(body, toolNames);
        const last = messages[messages.length - 1];
        if (results !== '' && last !== undefined && last.role === 'assistant') last.text = `${last.text}\n${results}`;
        continue;
      }
      const text = stripNoise(renderContent(body, toolNames));
      if (text !== '') messages.push({ role: 'user', text });
    } else if (type === 'assistant') {
      recordToolUses(body, toolNames);
      const text = stripNoise(renderContent(body, toolNames));
      if (text === '') continue;
      const last = messages[messages.length - 1];
      if (last !== undefined && last.role === 'assistant') last.text = `${last.text}\n${text}`;
      else messages.push({ role: 'assistant', text });
    }
  }
  return messages;
}

export function parseClaudeCodeJsonl(content: string): ParsedChat | null {
  const messages = claudeCodeMessages(content);
  return messages.length >= 2 ? { transcript: toTranscript(messages), messageCount: messages.length } : null;
}
