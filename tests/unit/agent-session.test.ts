/**
 * A live session as the hooks read it: the stored Claude Code and Codex fixtures become numbered
 * exchanges (tool chrome and injected reminders handled as the miner does), an unanswered last
 * question is not filed yet, exchanges are sliced like mined ones, and the host's hook JSON is
 * read tolerantly (a non-object is refused with the field named).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chunkExchangeUnits } from '../../core/chat/exchange.js';
import { readSession } from '../../core/chat/session.js';
import { parseHookInput } from '../../palace/hooks/agent-hooks.js';
import { sessionDrawers } from '../../palace/hooks/session-save.js';

const FIXTURES = path.resolve(import.meta.dirname, '..', 'fixtures', 'chat');

describe('readSession', () => {
  it('reads the Claude Code fixture into exchanges, one per human message', () => {
    const s = readSession(fs.readFileSync(path.join(FIXTURES, 'claude-code-session.jsonl'), 'utf8'), 'claude-code');
    expect(s.humanMessages).toBeGreaterThan(0);
    expect(s.exchanges).toHaveLength(s.humanMessages);
    expect(s.exchanges[0]!.text.startsWith('> Why does the nightly export job fail with ECONNRESET?')).toBe(true);
    expect(s.exchanges[0]!.text).not.toContain('system-reminder');
    expect(s.exchanges.every((e, i) => e.index === i)).toBe(true);
  });

  it('reads the Codex fixture from its event_msg turns only', () => {
    const s = readSession(fs.readFileSync(path.join(FIXTURES, 'codex-rollout.jsonl'), 'utf8'), 'codex');
    expect(s.exchanges[0]!.text.startsWith('> The tile cache grows without bound.')).toBe(true);
    expect(s.exchanges.map((e) => e.text).join('\n')).not.toContain('environment_context');
  });

  it('marks a question still waiting for its answer', () => {
    const lines = [
      JSON.stringify({ type: 'user', message: { role: 'user', content: 'First question about the export job?' } }),
      JSON.stringify({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: 'First answer about the export job.' }] } }),
      JSON.stringify({ type: 'user', message: { role: 'user', content: 'Second question, not answered yet?' } }),
    ].join('\n');
    const s = readSession(lines, 'claude-code');
    expect(s.exchanges.map((e) => e.answered)).toEqual([true, false]);
  });
});

describe('session drawers', () => {
  it('slices a long exchange like a mined one and keys ids by session, position and slice', () => {
    const long = `> question\n${'x'.repeat(1700)}`;
    const chunks = chunkExchangeUnits(['> short question here\nand a short answer to it', long]);
    expect(chunks.map((c) => [c.unit, c.chunkIndex])).toEqual([[0, 0], [1, 0], [1, 1], [1, 2]]);
    const save = { harness: 'codex' as const, sessionId: 's1', agent: 'codex', wing: 'w', room: 'general', sourceFile: '/t.jsonl',
      exchanges: [{ index: 7, text: long }] };
    const a = sessionDrawers(save, '2026-01-01T00:00:00.000000Z');
    const b = sessionDrawers({ ...save, exchanges: [{ index: 8, text: long }] }, '2026-01-02T00:00:00.000000Z');
    expect(new Set(a.map((d) => d.id)).size).toBe(3);
    expect(a.map((d) => d.id)).toEqual(sessionDrawers(save, '2030-01-01T00:00:00.000000Z').map((d) => d.id));
    expect(a.some((d) => b.some((e) => e.id === d.id))).toBe(false);
    expect(a.map((d) => d.content).join('')).toBe(long);
  });
});

describe('parseHookInput', () => {
  it('reads the fields both hosts send and tolerates missing ones', () => {
    expect(parseHookInput(JSON.stringify({ session_id: 's', transcript_path: '/t', cwd: '/p', hook_event_name: 'Stop', stop_hook_active: true }))).toEqual({
      session_id: 's',
      transcript_path: '/t',
      cwd: '/p',
      hook_event_name: 'Stop',
      stop_hook_active: true,
    });
    expect(parseHookInput('')).toMatchObject({ session_id: '', stop_hook_active: false });
    expect(parseHookInput(JSON.stringify({ transcript_path: null, stop_hook_active: 'true' }))).toMatchObject({ transcript_path: '', stop_hook_active: true });
  });

  it('refuses input that is not JSON, naming stdin', () => {
    expect(() => parseHookInput('{nope')).toThrow(expect.objectContaining({ code: 'invalid_argument', field: 'stdin' }));
  });
});
