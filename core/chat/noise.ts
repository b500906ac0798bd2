/**
 * Noise stripping for Claude Code messages (docs/palace-behaviour.md §5.3): removes chrome that the client or hooks
 * inject into a session (system reminders, hook banners, collapsed-output markers), never prose a
 * person wrote. Every pattern is anchored at a line start, optionally behind a `> ` quote.
 */
import { strip } from '../text.js';

const NOISE_TAGS = [
  'system-reminder',
  'command-message',
  'command-name',
  'task-notification',
  'user-prompt-submit-hook',
  'hook_output',
];

const NOISE_LINE_PREFIXES = [
  'CURRENT TIME:',
  'VERIFIED FACTS (do not contradict)',
  'AGENT SPECIALIZATION:',
  'Checking verified facts...',
  'Injecting timestamp...',
  'Starting background pipeline...',
  'Checking emotional weights...',
  'Auto-save reminder...',
  'Checking pipeline...',
  'MemPalace auto-save checkpoint.',
];

const HOOK_NAMES = ['Stop', 'PreCompact', 'PreToolUse', 'PostToolUse', 'UserPromptSubmit', 'Notification', 'SessionStart', 'SessionEnd'];

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// The tag body is lazy and may not span a blank line, so an unclosed tag cannot swallow the
// rest of a message.
const TAG_BLOCK = new RegExp(
  `^(?:> )?<(${NOISE_TAGS.map(escapeRegExp).join('|')})(?:\\s[^>]*)?>(?:(?!\\n[ \\t]*\\n)[\\s\\S])*?</\\1>[ \\t]*\\n?`,
  'gmu',
);
const PREFIX_LINE = new RegExp(`^(?:> )?(?:${NOISE_LINE_PREFIXES.map(escapeRegExp).join('|')})[^\\n]*\\n?`, 'gmu');
const HOOK_LINE = new RegExp(`^(?:> )?Ran \\d+ (?:${HOOK_NAMES.join('|')}) hooks?[^\\n]*\\n?`, 'gmu');
const COLLAPSED_OUTPUT_LINE = /^(?:> )?… \+\d+ lines[^\n]*\n?/gmu;
const EXPAND_MARKER = /[ \t]*\[\d+ tokens?\] \(ctrl\+o to expand\)/gu;

export function stripNoise(text: string): string {
  const cleaned = text
    .replace(TAG_BLOCK, '')
    .replace(PREFIX_LINE, '')
    .replace(HOOK_LINE, '')
    .replace(COLLAPSED_OUTPUT_LINE, '')
    .replace(EXPAND_MARKER, '')
    .replace(/\n{4,}/g, '\n\n\n');
  return strip(cleaned);
}
