import { describe, expect, it } from 'vitest';
import { DEFAULT_HALL_KEYWORDS, detectHall } from '../../core/halls.js';

describe('detectHall (docs/palace-behaviour.md §4.7.1)', () => {
  const hallOf = (halls: Record<string, string>) => {
    for (const [text, hall] of Object.entries(halls)) expect(detectHall(text), text).toBe(hall);
  };

  it('picks the hall with most distinct keywords, counting each keyword once', () => {
    hallOf({ 'The server threw an error in this function; bug bug bug.': 'technical', 'I remember the palace; happy, happy, happy, happy.': 'memory',
      'Nothing to see.': 'general' });
  });

  it('matches substrings, as the original does', () => {
    hallOf({ really: 'consciousness', 'a person': 'family', 'it will happen': 'creative' });
  });

  it('breaks ties by configuration order and is case-insensitive', () => {
    expect(detectHall('CODE and MEMORY')).toBe('memory');
    expect(Object.keys(DEFAULT_HALL_KEYWORDS)).toEqual(['emotions', 'consciousness', 'memory', 'technical', 'identity', 'family', 'creative']);
  });

  it('reads only the first 3,000 code points', () => {
    expect(detectHall(`${'😀'.repeat(3000)} python code`)).toBe('general');
    expect(detectHall(`${'😀'.repeat(2990)} python code`)).toBe('technical');
  });

  it('accepts configured hall keywords', () => {
    expect(detectHall('deploy the cluster', { ops: ['deploy', 'cluster'], technical: ['code'] })).toBe('ops');
  });
});
