import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { planMegaSplit, sessionStarts } from '../../core/chat/mega-split.js';

const content = readFileSync(new URL('../fixtures/chat/mega-sessions.txt', import.meta.url), 'utf8');
const lines = content.split('\n');

describe('mega-file splitting (docs/palace-behaviour.md §5.9)', () => {
  it('finds true session starts and ignores context restores', () => {
    // Lines 3, 21 and 33 (1-based) open sessions; 21 is a restore ("Ctrl+E … previous messages").
    expect(sessionStarts(lines)).toEqual([2, 32, 50]);
  });

  it('splits into named parts, skipping fragments under 10 lines', () => {
    const plan = planMegaSplit(content, { sourceStem: 'mega-sessions', knownNames: ['Olek'], usernameMap: { mkowalski: 'Maria' } });
    expect(plan.sessionStarts).toBe(3);
    expect(plan.skippedFragments).toBe(1);
    expect(plan.parts.map((p) => [p.fileName, p.lineCount])).toEqual([
      ['mega_sessions_2026-04-14_905AM_Maria_Why-is-the-CSV-importer-dropping-rows-with-ümlauts.txt', 32],
      ['mega_sessions_2026-04-15_347PM_Maria_Add-retries-to-the-S3-upload-max-3-attempts.txt', 18],
    ]);
    // Parts are verbatim slices of the file, the first one including the text before it.
    expect(plan.parts[0]!.content).toBe(`${lines.slice(0, 32).join('\n')}\n`);
    expect(plan.parts[1]!.content).toBe(`${lines.slice(32, 50).join('\n')}\n`);
  });

  it('uses partNN and the default subject when there is no timestamp or prompt', () => {
    const session = (v: string): string[] => [`Claude Code v${v}`, ...Array.from({ length: 11 }, (_, i) => `output ${i}`)];
    const text = [...session('1.0.1'), ...session('1.0.2')].join('\n');
    const plan = planMegaSplit(text, { sourceStem: 'terminal log (copy)' });
    expect(plan.parts.map((p) => p.fileName)).toEqual(['terminal_log_copy_part01_session.txt', 'terminal_log_copy_part02_session.txt']);
  });

  it('does nothing with fewer than min_sessions starts', () => {
    expect(planMegaSplit('Claude Code v1\nhello\n', { sourceStem: 'x' }).parts).toEqual([]);
    expect(planMegaSplit(content, { sourceStem: 'x', minSessions: 4 }).parts).toEqual([]);
  });

  it('keeps colliding names apart', () => {
    const session = ['Claude Code v1', '⏺ 9:05 AM Monday, April 14, 2026', '> fix the importer please', ...Array.from({ length: 10 }, () => 'x')];
    const plan = planMegaSplit([...session, ...session].join('\n'), { sourceStem: 's' });
    expect(plan.parts.map((p) => p.fileName)).toEqual(['s_2026-04-14_905AM_fix-the-importer-please.txt', 's_2026-04-14_905AM_fix-the-importer-please_2.txt']);
  });
});
