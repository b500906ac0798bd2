/**
 * The words of a query that its lexical leg searches for. A natural-language question is mostly
 * function words ("how do I", "what did", "in the"), and over code those same words are the
 * language's keywords (`if`, `in`, `is`, `for`, `with`, `not`), so matching them rewards noise;
 * they are dropped from the lexical leg (the encoder still reads the whole query). A bare
 * identifier is searched whole, every token kept. Speaker names that open most exchanges of the
 * conversations searched (conversationSpeakers) are dropped too: they are in nearly every drawer.
 */
import type { Drawer } from '../../core/drawer.js';
import { lexicalTokens } from '../../core/lexical.js';
import type { QueryShape } from './search-fusion.js';
import { exchangePlace } from './search-fusion.js';

/** `Name:` opening a line of an exchange, as the conversation filers write each turn. */
const SPEAKER = /^([\p{L}\p{N}][\p{L}\p{N}\p{M} ._'-]{0,40}):\s/gmu;

/** English function words: question words, articles, pronouns, auxiliaries, common prepositions. Months and names are not here. */
export const FUNCTION_WORDS: ReadonlySet<string> = new Set([
  'a',
  'about',
  'after',
  'all',
  'also',
  'am',
  'an',
  'and',
  'any',
  'are',
  'as',
  'at',
  'be',
  'been',
  'before',
  'being',
  'but',
  'by',
  'can',
  'could',
  'did',
  'do',
  'does',
  'doing',
  'done',
  'for',
  'from',
  'had',
  'has',
  'have',
  'having',
  'he',
  'her',
  'hers',
  'him',
  'his',
  'how',
  'i',
  'if',
  'in',
  'into',
  'is',
  'it',
  'its',
  'just',
  'me',
  'my',
  'of',
  'on',
  'or',
  'our',
  'ours',
  'she',
  'should',
  'so',
  'some',
  'than',
  'that',
  'the',
  'their',
  'theirs',
  'them',
  'then',
  'there',
  'these',
  'they',
  'this',
  'those',
  'to',
  'too',
  'us',
  'very',
  'was',
  'we',
  'were',
  'what',
  'when',
  'where',
  'which',
  'while',
  'who',
  'whom',
  'whose',
  'why',
  'with',
  'would',
  'you',
  'your',
  'yours',
]);

/** The distinct tokens the lexical leg searches for: a natural-language query's without function words and `dropped`, an identifier's all. */
export function lexicalQueryTokens(query: string, shape: QueryShape, dropped: ReadonlySet<string> = new Set()): string[] {
  const tokens = [...new Set(lexicalTokens(query))];
  if (shape === 'identifier') return tokens;
  return tokens.filter((t) => !FUNCTION_WORDS.has(t) && !dropped.has(t));
}

/**
 * The tokens of the speaker names that open turns in more than half of the sessions among
 * `drawers` (the candidates the vector leg found, the same on both profiles): in a chat between
 * two people their names are in nearly every exchange, so they tell no exchange apart.
 */
export function commonSpeakerTokens(drawers: readonly Drawer[]): Set<string> {
  const sessionsOf = new Map<string, Set<string>>();
  const sessions = new Set<string>();
  for (const d of drawers) {
    const place = exchangePlace(d.meta);
    if (!place) continue;
    sessions.add(place.session);
    for (const m of d.content.matchAll(SPEAKER)) {
      for (const token of lexicalTokens(m[1])) {
        const seen = sessionsOf.get(token) ?? new Set<string>();
        seen.add(place.session);
        sessionsOf.set(token, seen);
      }
    }
  }
  return new Set([...sessionsOf].filter(([, seen]) => seen.size > sessions.size / 2).map(([token]) => token));
}
