import { describe, expect, it } from 'vitest';
import { asciiLower, informativeTokenPositions } from '../../stores/shared/drawers/lexical-tokens.js';

describe('informativeTokenPositions', () => {
  it('keeps the tokens held by at least one and fewer than half the rows (FTS5 idf > 0), in query order', () => {
    expect(informativeTokenPositions([3, 2, 0, 5, 1], 6)).toEqual([1, 4]);
    expect(informativeTokenPositions([2, 3], 7)).toEqual([0, 1]);
  });
  it('keeps every token when none is in that range: tokens found nowhere never push the common ones out', () => {
    expect(informativeTokenPositions([0, 165, 155], 200)).toEqual([0, 1, 2]);
  });
  it('keeps every token when all are that common, and when the palace is empty', () => {
    expect(informativeTokenPositions([3, 6], 6)).toEqual([0, 1]);
    expect(informativeTokenPositions([0, 0], 0)).toEqual([0, 1]);
    expect(informativeTokenPositions([], 10)).toEqual([]);
  });
});

describe('asciiLower', () => {
  it('folds ASCII letters only, like the ascii tokenizer', () => {
    expect(asciiLower('ZÜRICH Os.Path')).toBe('zÜrich os.path');
  });
});
