/**
 * The hall label of a drawer (docs/palace-behaviour.md §4.7.1): the hall whose keywords occur most in the
 * first 3,000 code points. Substring matching is the original's behaviour (`real` fires on
 * "already"); the labels are coarse by design.
 */
import { codePointPrefix } from './chunking.js';

export type HallKeywords = Readonly<Record<string, readonly string[]>>;

export const DEFAULT_HALL_KEYWORDS: HallKeywords = {
  emotions: ['scared', 'afraid', 'worried', 'happy', 'sad', 'love', 'hate', 'feel', 'cry', 'tears'],
  consciousness: ['consciousness', 'conscious', 'aware', 'real', 'genuine', 'soul', 'exist', 'alive'],
  memory: ['memory', 'remember', 'forget', 'recall', 'archive', 'palace', 'store'],
  technical: ['code', 'python', 'script', 'bug', 'error', 'function', 'api', 'database', 'server'],
  identity: ['identity', 'name', 'who am i', 'persona', 'self'],
  family: ['family', 'kids', 'children', 'daughter', 'son', 'parent', 'mother', 'father'],
  creative: ['game', 'gameplay', 'player', 'app', 'design', 'art', 'music', 'story'],
};

/** First hall (config order) with the most distinct keywords present; `general` if none. */
export function detectHall(text: string, hallKeywords: HallKeywords = DEFAULT_HALL_KEYWORDS): string {
  const head = codePointPrefix(text, 3000).toLowerCase();
  let best = 'general';
  let bestScore = 0;
  for (const [hall, keywords] of Object.entries(hallKeywords)) {
    const score = new Set(keywords.map((k) => k.toLowerCase()).filter((k) => k !== '' && head.includes(k))).size;
    if (score > bestScore) {
      best = hall;
      bestScore = score;
    }
  }
  return best;
}
