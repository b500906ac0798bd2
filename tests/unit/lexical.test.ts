import { describe, expect, it } from 'vitest';
import { bm25Scores, lexicalTokens } from '../../core/lexical.js';

describe('lexicalTokens', () => {
  it('lowercases words and keeps identifiers whole plus their parts', () => {
    expect(lexicalTokens('Parse the HTTPServer')).toEqual(['parse', 'the', 'httpserver', 'http', 'server']);
    expect(lexicalTokens('read_file_lines()')).toEqual(['read_file_lines', 'read', 'file', 'lines']);
    expect(lexicalTokens('getUserById and os.path.join')).toEqual(['getuserbyid', 'get', 'user', 'by', 'id', 'and', 'os.path.join', 'os', 'path', 'join']);
    expect(lexicalTokens('kebab-case-name')).toEqual(['kebab-case-name', 'kebab', 'case', 'name']);
  });
  it('handles unicode and drops one-character tokens', () => {
    expect(lexicalTokens('Zürich café a x 😀 9')).toEqual(['zürich', 'café']);
    expect(lexicalTokens('')).toEqual([]);
  });
});

describe('bm25Scores', () => {
  it('scores documents that contain rarer query terms higher', () => {
    const docs = ['the cat sat', 'the dog sat', 'a parser for json files', 'json json json'];
    const s = bm25Scores('json parser', docs);
    expect(s[0]).toBe(0);
    expect(s[2]!).toBeGreaterThan(s[3]!);
    expect(s[3]!).toBeGreaterThan(0);
  });
  it('matches the BM25 formula on a hand-computed pool', () => {
    // Two docs, query "alpha": N=2, df=1, idf=ln((2-1+0.5)/(1+0.5)+1)=ln 2; doc0 tf=1, dl=1, avgdl=1.5
    const s = bm25Scores('alpha', ['alpha', 'beta gamma']);
    const expected = Math.log(2) * (1 * 2.5) / (1 + 1.5 * (1 - 0.75 + 0.75 * (1 / 1.5)));
    expect(s[0]).toBeCloseTo(expected, 12);
    expect(s[1]).toBe(0);
  });
  it('gives zeros for an empty query or pool', () => {
    expect(bm25Scores('', ['a b'])).toEqual([0]);
    expect(bm25Scores('x', [])).toEqual([]);
  });
});
