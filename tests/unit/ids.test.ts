import { describe, expect, it } from 'vitest';
import { addDrawerId, chunkRowId, hallwayId, tunnelId } from '../../core/ids.js';
import { codePointLength, hashN, lengthPrefixed } from '../../core/text.js';

// Test vectors from docs/palace-behaviour.md §3.1 (R3 rows are this project's "v4" ids).
describe('drawer ids', () => {
  it('matches the R3 add_drawer vector', () => {
    expect(addDrawerId('demo', 'notes', 'Hello palace')).toBe('drawer_demo_notes_63a63c46916a703a2e8c95a6');
  });
  it('counts code points, not UTF-16 units', () => {
    expect(codePointLength('Hello 😀')).toBe(7);
    expect(addDrawerId('demo', 'notes', 'Hello 😀')).toBe('drawer_demo_notes_0d3b994ba25c48fa8585df3c');
  });
  it('matches the R3 chunk and convo vectors of the spec recipe', () => {
    expect(`drawer_demo_notes_${hashN(lengthPrefixed(['/home/u/proj/docs/a.md', 3]), 24)}`).toBe('drawer_demo_notes_1edc022f93c4a5887fd47f8f');
    expect(`drawer_demo_technical_${hashN(lengthPrefixed(['/home/u/proj/docs/a.md', 'exchange', 3]), 24)}`).toBe(
      'drawer_demo_technical_d3f08fe75851f982d0c22bca',
    );
    expect(lengthPrefixed(['/home/u/proj/docs/a.md', 3])).toBe('22:/home/u/proj/docs/a.md1:3');
  });
  it('derives chunk rows, tunnels and hallways symmetrically', () => {
    expect(chunkRowId('drawer_x', 7)).toBe('drawer_x_chunk_000007');
    expect(tunnelId('a/b', 'c/d')).toBe(tunnelId('c/d', 'a/b'));
    expect(hallwayId('w', 'Zed', 'Amy')).toBe(hallwayId('w', 'Amy', 'Zed'));
    expect(hallwayId('w', 'Zed', 'Amy')).toMatch(/^hallway_w_Amy_Zed_[0-9a-f]{8}$/);
  });
});
