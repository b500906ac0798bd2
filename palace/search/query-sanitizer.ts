/**
 * The contamination guard of docs/palace-behaviour.md §8.2: agents sometimes prepend a whole prompt to a
 * query; embedding that retrieves almost nothing, so long queries are cut to their search intent.
 */
import { codePointLength, codePointSlice, replaceLoneSurrogates, strip } from '../../core/text.js';

export type SanitizerMethod = 'passthrough' | 'question_extraction' | 'tail_sentence' | 'tail_truncation';

export interface SanitizedQuery {
  query: string;
  method: SanitizerMethod;
  originalLength: number;
}

const PASSTHROUGH_MAX = 200;
const CANDIDATE_MAX = 250;
const MIN_INTENT = 10;

function lastChars(s: string, n: number): string {
  const len = codePointLength(s);
  return strip(codePointSlice(s, Math.max(0, len - n)));
}

function sentences(s: string): string[] {
  return s.split(/[.!?。！？\n]+/u).map(strip).filter((x) => x !== '');
}

function unquote(c: string): string {
  let s = c;
  while (s.length >= 2 && ((s.startsWith('"') && s.endsWith('"')) || (s.startsWith("'") && s.endsWith("'")))) s = strip(s.slice(1, -1));
  if (/^["']/.test(s)) s = s.slice(1);
  else if (/["']$/.test(s)) s = s.slice(0, -1);
  return strip(s);
}

function trim(candidate: string): string {
  const c = unquote(candidate);
  if (codePointLength(c) <= CANDIDATE_MAX) return c;
  const fragments = sentences(c).map(unquote).reverse();
  const fit = fragments.find((f) => {
    const n = codePointLength(f);
    return n >= MIN_INTENT && n <= CANDIDATE_MAX;
  });
  return fit ?? lastChars(c, CANDIDATE_MAX);
}

export function sanitizeQuery(raw: string): SanitizedQuery {
  const originalLength = codePointLength(raw);
  if (raw.trim() === '') return { query: raw, method: 'passthrough', originalLength };
  const q = strip(replaceLoneSurrogates(raw));
  if (codePointLength(q) <= PASSTHROUGH_MAX) return { query: q, method: 'passthrough', originalLength };
  const segments = q.split('\n').map(strip).filter((x) => x !== '');
  const questions = [...segments].reverse().filter((s) => /[?？]["']?$/u.test(s));
  if (questions.length > 0 && codePointLength(questions[0]!) >= MIN_INTENT) {
    return { query: trim(questions[0]!), method: 'question_extraction', originalLength };
  }
  for (const seg of [...segments].reverse()) {
    if (codePointLength(seg) >= MIN_INTENT) {
      const c = trim(seg);
      if (codePointLength(c) >= MIN_INTENT) return { query: c, method: 'tail_sentence', originalLength };
    }
  }
  return { query: lastChars(q, CANDIDATE_MAX), method: 'tail_truncation', originalLength };
}
