import { describe, expect, it } from 'vitest';
import { DEFAULT_HALL_KEYWORDS, detectHall } from '../../core/halls.js';

describe('detectHall (docs/palace-behaviour.md §4.7.1)', () => {
  it('picks the hall with most distinct keywords, counting each keyword once', () => {
    expect(detectHall('The server threw an error in this function; bug bug bug.')).toBe('technical');
    expect(detectHall('I remember the palace; happy, happy, happy, happy.')).toBe('memory');
    expect(detectHall('Nothing to see.')).toBe('general');
  });

  it('matches substrings, as the original does', () => {
    expect(detectHall('really')).toBe('consciousness');
    expect(detectHall('a person')).toBe('family');
    expect(detectHall('it will happen')).toBe('creative');
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
