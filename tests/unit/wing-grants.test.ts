/** The wing grants model (core/wing-grants.ts) and its parsing from a token file (api/auth.ts). */
import { describe, expect, it } from 'vitest';
import { parseTokenFileEntries } from '../../api/auth.js';
import { mayRead, mayWrite, parseWingGrants, wingAccess } from '../../core/wing-grants.js';

const tokensOf = (file: string, text: string) => parseTokenFileEntries(file, text).tokens;

describe('wing grants', () => {
  const g = parseWingGrants('test', { 'team_*': 'write', alice_notes: 'write', '*': 'read', hr: 'none' })!;

  it('the most specific pattern decides; write implies read; none hides', () => {
    expect(wingAccess(g, 'team_a')).toBe('write');
    expect(wingAccess(g, 'alice_notes')).toBe('write');
    expect(wingAccess(g, 'other')).toBe('read');
    expect(wingAccess(g, 'hr')).toBe('none');
    expect(mayRead(g, 'team_a') && mayWrite(g, 'team_a')).toBe(true);
    expect(mayWrite(g, 'other')).toBe(false);
  });

  it('a wing no pattern matches is invisible; equally specific patterns give the weaker access', () => {
    const narrow = parseWingGrants('test', { alice: 'write' })!;
    expect(mayRead(narrow, 'team')).toBe(false);
    expect(mayRead(narrow, 'Alice')).toBe(false);
    const tie = parseWingGrants('test', { 'a*': 'write', '*a': 'read' })!;
    expect(wingAccess(tie, 'aa')).toBe('read');
    expect(wingAccess(parseWingGrants('test', { 'x*y*z': 'read' })!, 'xayz')).toBe('read');
    expect(wingAccess(parseWingGrants('test', { 'x*y*z': 'read' })!, 'xz')).toBe('none');
  });

  it('refuses malformed maps with the field and the rule', () => {
    for (const [value, rule] of [[[], 'pattern_map'], [{}, 'pattern_map'], ['team', 'pattern_map'], [{ team: 'admin' }, 'access'], [{ ' t': 'read' },
      'pattern']]) {
      expect(() => parseWingGrants('test', value)).toThrow(expect.objectContaining({ field: 'wings', rule }));
    }
    expect(parseWingGrants('test', undefined)).toBeUndefined();
  });

  it('a token file entry carries its wings; an admin token may not', () => {
    const [e] = tokensOf('tokens.json', JSON.stringify({ tokens: [{ token: 's', agent: 'a', scopes: ['write'], wings: { team: 'write', '*': 'read' } }] }));
    expect(e!.caller.wings).toEqual({ team: 'write', '*': 'read' });
    expect(() => tokensOf('tokens.json', JSON.stringify({ tokens: [{ token: 's', agent: 'a', scopes: ['admin'], wings: { team: 'write' } }] })))
      .toThrow(expect.objectContaining({ field: 'wings', rule: 'admin_sees_all' }));
    expect(() => tokensOf('tokens.json', JSON.stringify({ tokens: [{ token: 's', agent: 'a', scopes: ['read'], wings: { team: 'all' } }] })))
      .toThrow(expect.objectContaining({ field: 'wings', rule: 'access' }));
  });
});
