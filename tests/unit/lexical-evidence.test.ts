/** Inflection folding for the lexical leg (palace/search/word-stems.ts) and where the ranking uses it (palace/search/lexical-evidence.ts). */
import { describe, expect, it } from 'vitest';
import { bm25Scores, lexicalTokens } from '../../core/lexical.js';
import { lexicalEvidence } from '../../palace/search/lexical-evidence.js';
import { wordStem } from '../../palace/search/word-stems.js';

describe('wordStem', () => {
  it('folds regular plurals, -ing and -ed to one stem and leaves short words, digits and -ss/-us/-is alone', () => {
    expect(['lists', 'matches', 'entries', 'sorting', 'running', 'stopped', 'installing'].map(wordStem)).toEqual([
      'list',
      'match',
      'entry',
      'sort',
      'run',
      'stop',
      'install',
    ]);
    expect(new Set(['parse', 'parses', 'parsed', 'parsing'].map(wordStem))).toEqual(new Set(['pars']));
    expect(new Set(['duplicate', 'duplicates', 'duplicated'].map(wordStem))).toEqual(new Set(['duplicat']));
    expect(['class', 'status', 'axis', 'is', 'gets', 'utf8s', 'bytes'].map(wordStem)).toEqual(['class', 'status', 'axis', 'is', 'get', 'utf8s', 'byt']);
  });
});

describe('lexicalEvidence', () => {
  const pool = [
    { text: 'def sort_list(values):\n    return sorted(values)', kind: 'code' as const },
    { text: 'def list_files(root):\n    return os.listdir(root)', kind: 'code' as const },
    { text: 'We were sorting lists of names all afternoon.', kind: 'prose' as const },
  ].map((c) => ({ tokens: lexicalTokens(c.text), kind: c.kind }));
  const plain = (q: string) => bm25Scores(q, pool.map((c) => c.tokens.join(' ')));

  it('a question meets code on word stems: "sorting lists" finds sort_list', () => {
    const q = lexicalTokens('sorting lists');
    const bm25 = plain('sorting lists');
    expect(bm25[0]).toBe(0);
    const evidence = lexicalEvidence(q, 'natural', pool, bm25);
    expect(evidence[0]).toBeGreaterThan(evidence[1]!);
    // Prose keeps the plain BM25, the figure results report.
    expect(evidence[2]).toBe(bm25[2]);
  });

  it('an identifier query, and a pool without code, keep the plain BM25', () => {
    const bm25 = plain('sort_lists');
    expect(lexicalEvidence(lexicalTokens('sort_lists'), 'identifier', pool, bm25)).toBe(bm25);
    const prose = pool.slice(2);
    const proseBm25 = bm25Scores('sorting lists', prose.map((c) => c.tokens.join(' ')));
    expect(lexicalEvidence(lexicalTokens('sorting lists'), 'natural', prose, proseBm25)).toBe(proseBm25);
  });
});
