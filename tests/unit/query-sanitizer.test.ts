import { describe, expect, it } from 'vitest';
import { sanitizeQuery } from '../../palace/search/query-sanitizer.js';

const prompt = 'You are a helpful coding agent working in a large repository. '.repeat(6);

describe('sanitizeQuery (docs/palace-behaviour.md §8.2)', () => {
  it('passes short queries through, trimmed', () => {
    expect(sanitizeQuery('  where is the lease renewed  ')).toEqual({ query: 'where is the lease renewed', method: 'passthrough', originalLength: 30 });
  });
  it('extracts the last question of a contaminated query', () => {
    const r = sanitizeQuery(`${prompt}\nSome context line here.\nHow does the worker renew its lease?\nThanks.`);
    expect(r.method).toBe('question_extraction');
    expect(r.query).toBe('How does the worker renew its lease?');
  });
  it('falls back to the last meaningful segment, then to the tail', () => {
    const tail = sanitizeQuery(`${prompt}\nfind the fencing token check`);
    expect(tail).toMatchObject({ method: 'tail_sentence', query: 'find the fencing token check' });
    // Only short lines: no segment reaches 10 characters, so the last 250 characters are used.
    const noSegments = sanitizeQuery('ab cd\n'.repeat(60));
    expect(noSegments.method).toBe('tail_truncation');
    expect(noSegments.query).toBe('ab cd\n'.repeat(60).trim().slice(-250).trim());
  });
  it('cuts an over-long extracted sentence to a fragment of at most 250 characters', () => {
    const long = `${'word '.repeat(80)}. final clause about cursors and pages`;
    const r = sanitizeQuery(`${prompt}\n${long}`);
    expect(r.method).toBe('tail_sentence');
    expect(r.query).toBe('final clause about cursors and pages');
  });
  it('counts code points for the passthrough limit', () => {
    expect(sanitizeQuery('😀'.repeat(200)).method).toBe('passthrough');
    expect(sanitizeQuery('😀'.repeat(201)).method).not.toBe('passthrough');
  });
});
