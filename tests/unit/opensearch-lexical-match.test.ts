/** The OpenSearch adapter's per-row lexical match: length and term frequencies from the stored token stream. */
import { describe, expect, it } from 'vitest';
import { lexicalTokens } from '../../core/lexical.js';
import { lexicalMatch } from '../../stores/opensearch/lexical-rank.js';

describe('lexicalMatch', () => {
  it('counts each term in the stream the document stored, and the stream’s length', () => {
    const stream = lexicalTokens('retry the retry, then parseHttpURL once; retry').join(' ');
    expect(lexicalMatch('d1', stream, ['retry', 'http', 'missing'])).toEqual({ id: 'd1', length: stream.split(' ').length, frequency: [3, 1, 0] });
  });

  it('gives an empty stream length zero', () => {
    expect(lexicalMatch('d2', '', ['retry'])).toEqual({ id: 'd2', length: 0, frequency: [0] });
  });
});
