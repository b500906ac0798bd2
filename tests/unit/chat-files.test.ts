import { describe, expect, it } from 'vitest';
import { agentSessionsWing, isConversationFileName } from '../../core/chat/files.js';

describe('conversation file selection and agent-session wing (docs/palace-behaviour.md §5.1)', () => {
  it.each([
    ['chat.txt', true],
    ['NOTES.MD', true],
    ['conversations.json', true],
    ['rollout-2026.JSONL', true],
    ['session.meta.json', false],
    ['image.png', false],
    ['.json', false],
    ['archive.json.gz', false],
  ])('%s → %s', (name, expected) => {
    expect(isConversationFileName(name)).toBe(expected);
  });

  it.each([
    ['/home/ana/.codex/sessions/2026/05/01', 'wing_api'],
    ['/home/ana/.gemini/tmp/abc', 'wing_api'],
    ['/home/ana/.claude/projects/-home-ana-src', 'wing_api'],
    ['C:\\Users\\ana\\.claude\\projects\\x', 'wing_api'],
    ['/home/ana/.claude/todos', undefined],
    ['/home/ana/.gemini-backup/tmp', undefined],
    ['/home/ana/projects/.claude', undefined],
    ['/home/ana/chats', undefined],
  ])('%s → %s', (path, expected) => {
    expect(agentSessionsWing(path)).toBe(expected);
  });
});
