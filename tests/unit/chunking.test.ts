import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { chunkText, codePointPrefix, repairChunkParams, splitContent } from '../../core/chunking.js';

const thirtyLines = Array.from({ length: 30 }, (_, i) => `${String(i).padStart(2, '0')}${'x'.repeat(57)}`).join('\n') + '\n';

describe('chunkText (docs/palace-behaviour.md §4.5)', () => {
  it('reproduces the spec example: 30 lines of 60 characters', () => {
    const stripped = thirtyLines.trim();
    expect(Array.from(stripped)).toHaveLength(1799);
    const chunks = chunkText(thirtyLines);
    expect(chunks.map((c) => [c.chunkIndex, c.lineStart, c.lineEnd])).toEqual([[0, 1, 13], [1, 12, 24], [2, 23, 30]]);
    expect(chunks.map((c) => c.content)).toEqual([
      stripped.slice(0, 779),
      stripped.slice(679, 1439),
      stripped.slice(1339, 1799),
    ]);
  });

  it('returns nothing for blank content and drops short pieces without consuming an index', () => {
    expect(chunkText('  \n\t ')).toEqual([]);
    expect(chunkText('short')).toEqual([]);
    // The middle window is 790 spaces and 10 letters: dropped after strip; the next kept chunk is index 1.
    const text = `${'a'.repeat(800)}${' '.repeat(790)}${'b'.repeat(10)}${'c'.repeat(800)}`;
    const chunks = chunkText(text, { size: 800, overlap: 0 });
    expect(chunks.map((c) => [c.chunkIndex, c.content])).toEqual([[0, 'a'.repeat(800)], [1, 'c'.repeat(800)]]);
  });

  it('prefers a blank line, then a newline, only past the window midpoint', () => {
    const para = `${'a'.repeat(500)}\n\n${'b'.repeat(200)}\n${'c'.repeat(400)}`;
    expect(chunkText(para, { overlap: 0 })[0]!.content).toBe('a'.repeat(500));
    const early = `${'a'.repeat(300)}\n\n${'b'.repeat(450)}\n${'c'.repeat(400)}`;
    expect(chunkText(early, { overlap: 0 })[0]!.content).toBe(`${'a'.repeat(300)}\n\n${'b'.repeat(450)}`);
    const noBreak = 'z'.repeat(1000);
    expect(chunkText(noBreak, { overlap: 0 }).map((c) => c.content.length)).toEqual([800, 200]);
  });

  it('counts code points, not UTF-16 units', () => {
    const emoji = '😀'.repeat(900);
    const chunks = chunkText(emoji, { overlap: 0 });
    expect(chunks.map((c) => Array.from(c.content).length)).toEqual([800, 100]);
  });

  it('line numbers are relative to the stripped content', () => {
    const chunks = chunkText(`\n\n\n${thirtyLines}`);
    expect(chunks[0]!.lineStart).toBe(1);
    expect(chunks[0]!.lineEnd).toBe(13);
  });

  it('always makes progress where the original looped forever (size 100, overlap 99, 60-char lines)', () => {
    const chunks = chunkText(thirtyLines, { size: 100, overlap: 99, min: 1 });
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks.at(-1)!.lineEnd).toBe(30);
  });

  it('applies the config repair rules', () => {
    expect(repairChunkParams({ size: true, overlap: 1.5, min: '9' })).toEqual({ size: 800, overlap: 100, min: 50 });
    expect(repairChunkParams({ size: 0, overlap: -1, min: 0 })).toEqual({ size: 800, overlap: 100, min: 50 });
    expect(repairChunkParams({ size: 300, overlap: 300 })).toEqual({ size: 300, overlap: 100, min: 50 });
    expect(repairChunkParams({ size: 80, overlap: 90 })).toEqual({ size: 80, overlap: 79, min: 50 });
    expect(repairChunkParams({ size: 40, overlap: 10, min: 45 })).toEqual({ size: 40, overlap: 10, min: 40 });
    expect(repairChunkParams({ size: 60, overlap: 10, min: 70 })).toEqual({ size: 60, overlap: 10, min: 50 });
  });

  it('chunks are stripped substrings of the input, in order, within the size (property)', () => {
    fc.assert(fc.property(
      fc.array(fc.constantFrom('a', 'b', ' ', '\n', '😀', 'é'), { maxLength: 600 }),
      fc.integer({ min: 1, max: 120 }),
      fc.integer({ min: 0, max: 119 }),
      (chars, size, overlap) => {
        const text = chars.join('');
        const chunks = chunkText(text, { size, overlap, min: 1 });
        if (/[ab😀é]/u.test(text)) expect(chunks.length).toBeGreaterThan(0);
        chunks.forEach((c, i) => {
          expect(c.chunkIndex).toBe(i);
          expect(text.includes(c.content)).toBe(true);
          expect(c.content).toBe(c.content.trim());
          expect(Array.from(c.content).length).toBeLessThanOrEqual(size);
          expect(c.lineStart).toBeLessThanOrEqual(c.lineEnd);
          if (i > 0) expect(c.lineStart).toBeGreaterThanOrEqual(chunks[i - 1]!.lineStart);
        });
      },
    ));
  });
});

describe('splitContent (docs/tools.md §0.4)', () => {
  it('returns short content whole', () => {
    expect(splitContent('  hi  ')).toEqual(['  hi  ']);
    expect(splitContent('x'.repeat(800))).toEqual(['x'.repeat(800)]);
  });

  it('cuts just before a markdown heading line in preference to other boundaries', () => {
    const content = `${'a'.repeat(450)}\n\n${'b'.repeat(100)}\n## Heading\n${'c'.repeat(100)} ${'d'.repeat(300)}`;
    const rows = splitContent(content, 800);
    expect(rows[0]).toBe(`${'a'.repeat(450)}\n\n${'b'.repeat(100)}\n`);
    expect(rows[1]!.startsWith('## Heading\n')).toBe(true);
    expect(rows.join('')).toBe(content);
  });

  it('falls back: blank line, then newline, then space, then the window end', () => {
    const blank = `${'a'.repeat(500)}\n\n${'b'.repeat(100)}\n${'c'.repeat(400)}`;
    expect(splitContent(blank, 800)[0]).toBe(`${'a'.repeat(500)}\n\n`);
    const newline = `${'a'.repeat(500)} ${'b'.repeat(100)}\n${'c'.repeat(400)}`;
    expect(splitContent(newline, 800)[0]).toBe(`${'a'.repeat(500)} ${'b'.repeat(100)}\n`);
    const space = `${'a'.repeat(500)} ${'b'.repeat(500)}`;
    expect(splitContent(space, 800)[0]).toBe(`${'a'.repeat(500)} `);
    expect(splitContent('q'.repeat(1700), 800).map((r) => r.length)).toEqual([800, 800, 100]);
  });

  it('ignores boundaries before the window midpoint', () => {
    const early = `${'a'.repeat(300)}\n\n${'b'.repeat(700)}`;
    expect(splitContent(early, 800)[0]).toBe(early.slice(0, 800));
    // "###### x" is a heading; "####### x" (seven) is not.
    const seven = `${'a'.repeat(500)}\n####### x${'b'.repeat(500)}`;
    expect(splitContent(seven, 800)[0]).toBe(`${'a'.repeat(500)}\n`);
  });

  it('slices at fixed positions when fixed slicing gives fewer rows than chunk_boundary_min_chunks', () => {
    const content = `${'a'.repeat(500)}\n\n${'b'.repeat(500)}`;
    expect(splitContent(content, 800, 3)).toEqual([content.slice(0, 800), content.slice(800)]);
    expect(splitContent(content, 800, 2)[0]).toBe(`${'a'.repeat(500)}\n\n`);
  });

  it('concatenation equals the input and rows respect the size in code points (property)', () => {
    fc.assert(fc.property(
      fc.array(fc.constantFrom('a', ' ', '\n', '#', '😀', '字', '\r'), { maxLength: 3000 }),
      fc.integer({ min: 1, max: 400 }),
      fc.integer({ min: 0, max: 5 }),
      (chars, size, minChunks) => {
        const content = chars.join('');
        const rows = splitContent(content, size, minChunks);
        expect(rows.join('')).toBe(content);
        for (const r of rows) expect(Array.from(r).length).toBeLessThanOrEqual(size);
        if (Array.from(content).length > size) { for (const r of rows) expect(r.length).toBeGreaterThan(0); }
      },
    ));
  });
});

describe('codePointPrefix', () => {
  it('takes code points, never splitting a surrogate pair', () => {
    expect(codePointPrefix('😀😀abc', 3)).toBe('😀😀a');
    expect(codePointPrefix('ab', 10)).toBe('ab');
  });
});
