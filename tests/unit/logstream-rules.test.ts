/** Pure rules of the logstream: clock, quoting, slugs, canonical metadata, limits, independence. */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { metadataJson, pyRepr, slug, waitTimeoutMs, listLimit } from '../../palace/logstream/validate.js';
import { observe, parseHlc, renderHlc, tick } from '../../stores/embedded/logstream/clock.js';
import { fallbackDelayMs } from '../../stores/shared/logstream/backoff.js';

const REP = 'rep_0123456789abcdef0123456789abcdef';

describe('hybrid logical clock (docs/logstream.md §2)', () => {
  it('renders fixed width so string order is clock order', () => {
    expect(renderHlc({ ms: 1_784_020_502_117, counter: 0 }, REP)).toBe(`1784020502117-000000-${REP}`);
    expect(renderHlc({ ms: 5, counter: 255 }, REP)).toBe(`0000000000005-0000ff-${REP}`);
    expect(parseHlc(`1784020502117-00002a-${REP}`)).toEqual({ ms: 1_784_020_502_117, counter: 42 });
    expect(parseHlc('garbage')).toBeNull();
  });
  it('ticks forward even when the wall clock steps back, and rolls the counter over', () => {
    expect(tick({ ms: 100, counter: 7 }, 200)).toEqual({ ms: 200, counter: 0 });
    expect(tick({ ms: 100, counter: 7 }, 50)).toEqual({ ms: 100, counter: 8 });
    expect(tick({ ms: 100, counter: 0xffffff }, 100)).toEqual({ ms: 101, counter: 0 });
  });
  it('observes newer stamps but ignores ones more than 60 s in the future', () => {
    const now = 1_000_000;
    expect(observe({ ms: 10, counter: 0 }, renderHlc({ ms: now + 59_000, counter: 3 }, REP), now)).toEqual({ ms: now + 59_000, counter: 3 });
    expect(observe({ ms: 10, counter: 0 }, renderHlc({ ms: now + 61_000, counter: 3 }, REP), now)).toEqual({ ms: 10, counter: 0 });
    expect(observe({ ms: 10, counter: 5 }, renderHlc({ ms: 10, counter: 4 }, REP), now)).toEqual({ ms: 10, counter: 5 });
  });
});

describe('quoting, slugs, canonical metadata', () => {
  it('quotes like the original', () => {
    const quoted: [unknown, string][] = [['abc', "'abc'"], ["it's", '"it\'s"'], ['both \' and "', "'both \\' and \"'"], ['a\nb\\', "'a\\nb\\\\'"], [null,
      'None']];
    for (const [value, text] of quoted) expect(pyRepr(value)).toBe(text);
  });
  it('slugs per docs/logstream.md §5.9', () => {
    expect(slug('Add CSV export to the billing page.', 'work')).toBe('add_csv_export_to_the_billing_page');
    expect(slug('__Hello, World__', 'x')).toBe('hello_world');
    expect(slug('日本語', 'work')).toBe('work');
  });
  it('sorts keys by code point at every level with the original separators', () => {
    expect(metadataJson({ b: 1, a: { d: [true, null], c: 'é' } })).toBe('{"a": {"c": "é", "d": [true, null]}, "b": 1}');
    // U+FF5E sorts before U+1F600 by code point, after it by UTF-16 unit.
    expect(metadataJson({ '😀': 1, '～': 2 })).toBe('{"～": 2, "😀": 1}');
    expect(metadataJson({ q: 'say "hi"\n' })).toBe('{"q": "say \\"hi\\"\\n"}');
  });
});

describe('limits and timeouts', () => {
  it('clamps timeout_ms to 300000 and limit to 500', () => {
    expect(waitTimeoutMs(undefined)).toBe(60_000);
    expect(waitTimeoutMs(10_000_000)).toBe(300_000);
    expect(waitTimeoutMs('0')).toBe(0);
    expect(listLimit(501)).toBe(500);
  });
  it('falls back to the original polling schedule', () => {
    for (let n = 0; n < 10; n++) {
      const d = fallbackDelayMs(n);
      const cap = Math.min(1, 0.25 * 1.5 ** n) * 1000;
      expect(d).toBeGreaterThanOrEqual(cap * 0.75);
      expect(d).toBeLessThan(cap);
    }
  });
});

describe('independence from the palace index (docs/logstream.md §6)', () => {
  it('imports no drawer store, embedder, vector index or graph code', () => {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
    const folders = ['palace/logstream', 'stores/ports/logstream', 'stores/shared/logstream', 'stores/embedded/logstream', 'stores/redis/logstream'];
    const files = folders.flatMap((folder) => fs.readdirSync(path.join(root, folder)).map((name) => path.join(folder, name)));
    for (const file of files) {
      const imports = [...fs.readFileSync(path.join(root, file), 'utf8').matchAll(/from '([^']+)'/g)].map((m) => m[1]!);
      for (const spec of imports) expect(spec).not.toMatch(/drawer|embed\/|graph|kg|search|opensearch|neo4j/);
    }
  });
});
