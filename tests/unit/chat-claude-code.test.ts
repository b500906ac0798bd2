import { describe, expect, it } from 'vitest';
import { claudeCodeMessages, renderToolResult, renderToolUse } from '../../core/chat/claude-code.js';
import { stripNoise } from '../../core/chat/noise.js';

describe('noise stripping (docs/palace-behaviour.md §5.3)', () => {
  it('removes injected chrome and collapses blank runs', () => {
    const text = [
      '> CURRENT TIME: 2026-05-02 08:14',
      'Real question here',
      '<system-reminder>',
      'remember things',
      '</system-reminder>   ',
      'More text [1234 tokens] (ctrl+o to expand)',
      '… +12 lines (ctrl+o to expand)',
      'Ran 3 PostToolUse hooks',
      'MemPalace auto-save checkpoint. Saved 3 drawers',
      '',
      '',
      '',
      '',
      '',
      'End',
    ].join('\n');
    expect(stripNoise(text)).toBe('Real question here\nMore text\n\n\nEnd');
  });

  it('keeps tags that span a blank line or do not start a line, and prose mentioning the prefixes', () => {
    const spanning = '<system-reminder>\nfirst\n\nsecond\n</system-reminder>\nkeep';
    expect(stripNoise(spanning)).toBe(spanning);
    expect(stripNoise('see <system-reminder>x</system-reminder> here')).toBe('see <system-reminder>x</system-reminder> here');
    expect(stripNoise('The log said CURRENT TIME: noon')).toBe('The log said CURRENT TIME: noon');
    expect(stripNoise('current time: lowercase stays')).toBe('current time: lowercase stays');
  });

  it('removes every listed tag, with attributes, behind a quote', () => {
    const tags = ['system-reminder', 'command-message', 'command-name', 'task-notification', 'user-prompt-submit-hook', 'hook_output'];
    for (const tag of tags) expect(stripNoise(`> <${tag} id="1">noise</${tag}>\nkept`)).toBe('kept');
  });
});

describe('Claude Code tool rendering (docs/palace-behaviour.md §5.2)', () => {
  it('summarises tool calls by tool', () => {
    expect(renderToolUse('Bash', { command: 'a'.repeat(250) })).toBe(`[Bash] ${'a'.repeat(200)}...`);
    expect(renderToolUse('Bash', { command: '😀'.repeat(201) })).toBe(`[Bash] ${'😀'.repeat(200)}...`);
    expect(renderToolUse('Bash', { command: '😀'.repeat(200) })).toBe(`[Bash] ${'😀'.repeat(200)}`);
    expect(renderToolUse('Read', { file_path: 'src/a.ts' })).toBe('[Read src/a.ts]');
    expect(renderToolUse('Read', { file_path: 'src/a.ts', offset: 10, limit: 5 })).toBe('[Read src/a.ts:10-15]');
    expect(renderToolUse('Read', { file_path: 'src/a.ts', offset: 'top', limit: 5 })).toBe('[Read src/a.ts:top+5]');
    expect(renderToolUse('Grep', { pattern: 'TODO', glob: '*.ts' })).toBe('[Grep] TODO in *.ts');
    expect(renderToolUse('Grep', { pattern: 'TODO' })).toBe('[Grep] TODO in ');
    expect(renderToolUse('Glob', { pattern: '**/*.md' })).toBe('[Glob] **/*.md');
    expect(renderToolUse('Write', { file_path: 'notes.md', content: 'x' })).toBe('[Write notes.md]');
    expect(renderToolUse('WebFetch', { url: 'https://example.org/' })).toBe('[WebFetch] {"url":"https://example.org/"}');
    expect(renderToolUse('Task', { prompt: 'p'.repeat(300) })).toBe(`[Task] ${`{"prompt":"${'p'.repeat(300)}"}`.slice(0, 200)}...`);
  });

  it('trims tool results by the tool that produced them', () => {
    const fortyFive = Array.from({ length: 45 }, (_, i) => `line ${i + 1}`).join('\n');
    const bash = renderToolResult('Bash', fortyFive).split('\n');
    expect(bash).toHaveLength(41);
    expect(bash[0]).toBe('→ line 1');
    expect(bash[19]).toBe('→ line 20');
    expect(bash[20]).toBe('→ ... [5 lines omitted] ...');
    expect(bash[21]).toBe('→ line 26');
    expect(bash[40]).toBe('→ line 45');
    expect(renderToolResult('Bash', Array.from({ length: 40 }, () => 'x').join('\n')).split('\n')).toHaveLength(40);

    const grep = renderToolResult('Grep', Array.from({ length: 23 }, (_, i) => `f${i}.ts`).join('\n')).split('\n');
    expect(grep).toHaveLength(21);
    expect(grep[20]).toBe('→ ... [3 more matches]');

    const long = 'é'.repeat(3000);
    expect(renderToolResult('WebSearch', long)).toBe(`→ ${'é'.repeat(2048)}... [truncated, 3000 chars]`);
    expect(renderToolResult('Unknown', [{ type: 'text', text: ' a ' }, { type: 'image' }, { type: 'text', text: 'b' }])).toBe('→ a \nb');
    expect(renderToolResult('Read', 'file body')).toBe('');
    expect(renderToolResult('Bash', '   ')).toBe('');
  });

  it('tool results with no assistant turn before them are dropped; consecutive assistant turns merge', () => {
    const jsonl = [
      { type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 'x', content: 'orphan' }] } },
      { type: 'human', message: { content: 'question' } },
      { type: 'assistant', message: { content: 'part one' } },
      { type: 'assistant', message: { content: { text: 'part two' } } },
      { type: 'system', message: { content: 'ignored' } },
    ]
      .map((e) => JSON.stringify(e))
      .join('\n');
    expect(claudeCodeMessages(jsonl)).toEqual([
      { role: 'user', text: 'question' },
      { role: 'assistant', text: 'part one\npart two' },
    ]);
  });
});
