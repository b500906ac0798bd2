/**
 * General extraction (docs/palace-behaviour.md §5.6, `extract = general`): segments a conversation into turns or
 * paragraphs, scores each against five families of markers, and files the segments that
 * clearly are a decision, preference, milestone, problem or emotional moment. The type becomes
 * the drawer's room. Segments are filed verbatim (stripped), sliced at `chunkSize` code points.
 */
import { codePointLength, strip } from '../text.js';
import { paragraphUnits } from './exchange.js';
import type { ChunkLimits, ConversationChunk } from './types.js';
import { DEFAULT_CONVERSATION_LIMITS } from './types.js';
import { codePointSlices, lstrip } from './util.js';

export const MEMORY_TYPES = ['decision', 'preference', 'milestone', 'problem', 'emotional'] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

export interface GeneralMemory extends ConversationChunk {
  /** The memory type, which is also the drawer's room. */
  room: MemoryType;
}

// Word boundaries with Unicode word characters (docs/palace-behaviour.md §0); JavaScript's `\b` is ASCII-only.
const WORD = '[\\p{L}\\p{N}_]';
const B = `(?<!${WORD})`;
const E = `(?!${WORD})`;
const APOS = "['’]?";
const ANY = '[^\\n]*';

function words(list: string): string {
  return `${B}(?:${list})${E}`;
}

function compile(patterns: readonly string[]): RegExp[] {
  return patterns.map((p) => new RegExp(p, 'gu'));
}

// dprint-ignore: the marker word lists are laid out as tables.
const MARKERS: Record<MemoryType, RegExp[]> = {
  decision: compile([
    `${B}let${APOS}s (?:use|go with|try|pick|choose|switch to)${E}`,
    `${B}we (?:should|decided|chose|went with|picked|settled on)${E}`,
    `${B}i${APOS}m going (?:to|with)${E}`,
    `${B}better (?:to|than|approach|option|choice)${E}`,
    words('instead of'),
    words('rather than'),
    `${B}the reason (?:is|was|being)${E}`,
    words('because'),
    `${B}trade-?offs?${E}`,
    words('pros and cons'),
    `${B}over${E}${ANY}${B}because${E}`,
    words('architecture'),
    words('approach'),
    words('strategy'),
    words('pattern'),
    words('stack'),
    words('framework'),
    words('infrastructure'),
    `${B}set (?:it |this )?to${E}`,
    words('configure'),
    words('default'),
  ]),
  preference: compile([
    words('i prefer'),
    words('always use'),
    words('never use'),
    `${B}don${APOS}t (?:ever |like to )?(?:use|do|mock|stub|import)${E}`,
    `${B}i like (?:to|when|how)${E}`,
    `${B}i hate (?:when|how|it when)${E}`,
    `${B}please (?:always|never|don${APOS}t)${E}`,
    `${B}my (?:rule|preference|style|convention) is${E}`,
    `${B}we (?:always|never)${E}`,
    `${B}functional${E}${ANY}${B}style${E}`,
    words('imperative'),
    `${B}snake_?case${E}`,
    `${B}camel_?case${E}`,
    `${B}tabs${E}${ANY}${B}spaces${E}`,
    `${B}spaces${E}${ANY}${B}tabs${E}`,
    `${B}use${E}${ANY}${B}instead of${E}`,
  ]),
  milestone: compile([
    words('it works'),
    words('it worked'),
    words('got it working'),
    words('fixed'),
    words('solved'),
    words('breakthrough'),
    `${B}figured (?:it )?out${E}`,
    words('nailed it'),
    `${B}cracked (?:it|the)${E}`,
    words('finally'),
    words('first time'),
    words('first ever'),
    `${B}never (?:done|been|had) before${E}`,
    words('discovered'),
    words('realized'),
    `${B}found (?:out|that)${E}`,
    words('turns out'),
    `${B}the key (?:is|was|insight)${E}`,
    `${B}the trick (?:is|was)${E}`,
    `${B}now i (?:understand|see|get it)${E}`,
    words('built'),
    words('created'),
    words('implemented'),
    words('shipped'),
    words('launched'),
    words('deployed'),
    words('released'),
    words('prototype'),
    words('proof of concept'),
    words('demo'),
    `${B}version \\p{Nd}`,
    `${B}v\\p{Nd}+\\.\\p{Nd}+`,
    `\\p{Nd}+x (?:compression|faster|slower|better|improvement|reduction)${E}`,
    `\\p{Nd}+% (?:reduction|improvement|faster|better|smaller)${E}`,
  ]),
  problem: compile([
    words('bug|error|crash|fail|broke|broken|issue|problem'),
    `${B}doesn${APOS}t work${E}`,
    words('not working'),
    `${B}won${APOS}t${E}${ANY}${B}work${E}`,
    `${B}keeps? (?:failing|crashing|breaking|erroring)${E}`,
    words('root cause'),
    `${B}the (?:problem|issue|bug) (?:is|was)${E}`,
    `${B}turns out${E}${ANY}${B}(?:was|because|due to)${E}`,
    `${B}the fix (?:is|was)${E}`,
    words('workaround'),
    `${B}that${APOS}s why${E}`,
    words('the reason it'),
    `${B}fixed (?:it|the|by)${E}`,
    `${B}solution (?:is|was)${E}`,
    words('resolved'),
    words('patched'),
    `${B}the answer (?:is|was)${E}`,
    `${B}(?:had|need) to${E}${ANY}${B}instead${E}`,
  ]),
  emotional: compile([
    ...[
      'love', 'scared', 'afraid', 'proud', 'hurt', 'happy', 'sad', 'cry', 'crying', 'miss', 'sorry',
      'grateful', 'angry', 'worried', 'lonely', 'beautiful', 'amazing', 'wonderful',
    ].map((w) => words(w)),
    words('i feel'),
    `${B}i${APOS}m scared${E}`,
    words('i love you'),
    `${B}i${APOS}m sorry${E}`,
    `${B}i can${APOS}t${E}`,
    words('i wish'),
    words('i miss'),
    words('i need'),
    words('never told anyone'),
    words('nobody knows'),
    '\\*[^*]+\\*',
  ]),
};

const RESOLUTION = compile([
  words('fixed|solved|resolved|patched'),
  words('got it working'),
  words('it works'),
  words('nailed it'),
  `${B}figured (?:it )?out${E}`,
  `${B}the (?:fix|answer|solution)${E}`,
]);

const POSITIVE_WORDS = new Set([
  'pride',
  'proud',
  'joy',
  'happy',
  'love',
  'loving',
  'beautiful',
  'amazing',
  'wonderful',
  'incredible',
  'fantastic',
  'brilliant',
  'perfect',
  'excited',
  'thrilled',
  'grateful',
  'warm',
  'breakthrough',
  'success',
  'works',
  'working',
  'solved',
  'fixed',
  'nailed',
  'heart',
  'hug',
  'precious',
  'adore',
]);
const NEGATIVE_WORDS = new Set([
  'bug',
  'error',
  'crash',
  'crashing',
  'crashed',
  'fail',
  'failed',
  'failing',
  'failure',
  'broken',
  'broke',
  'breaking',
  'breaks',
  'issue',
  'problem',
  'wrong',
  'stuck',
  'blocked',
  'unable',
  'impossible',
  'missing',
  'terrible',
  'horrible',
  'awful',
  'worse',
  'worst',
  'panic',
  'disaster',
  'mess',
]);

const TURN_START = [/^>\s/u, /^(?:human|user|q) ?:/iu, /^(?:assistant|ai|a|claude|chatgpt) ?:/iu];
const MIN_TURN_LINES = 3;
const MIN_SEGMENT_CODE_POINTS = 20;
const MIN_CONFIDENCE = 0.3;

const CODE_LINE = [
  /^[$#]\s/u,
  /^(?:cd|source|echo|export|pip|pip3|npm|npx|yarn|pnpm|git|python|python3|node|bash|sh|curl|wget|mkdir|rm|cp|mv|ls|cat|grep|find|chmod|sudo|brew|docker|kubectl|make)\s/u,
  /^(?:import|from|def|class|function|const|let|var|return)\s/u,
  /^[A-Z_]{2,}=/u,
  /^\|/u,
  /^-{2,}/u,
  /^[{}[\]()]+[;,]?$/u,
  /^(?:if|for|while|try|except|elif|else|switch|case)(?:\s|:|\(|$)/u,
  /^[\p{L}\p{N}_]+\.[\p{L}\p{N}_.]+\(/u,
  /^[\p{L}\p{N}_]+ = [\p{L}\p{N}_]+\.[\p{L}\p{N}_]+/u,
];

function isTurnStart(line: string): boolean {
  const s = strip(line);
  return TURN_START.some((p) => p.test(s));
}

/** Segments of a text: one per turn when it has at least 3 turn lines, else paragraphs. */
export function segmentConversation(text: string): string[] {
  const lines = text.split('\n');
  if (lines.filter(isTurnStart).length < MIN_TURN_LINES) return paragraphUnits(text, (t) => t.split('\n').length > 20);
  const segments: string[] = [];
  let current: string[] = [];
  let previousQuoted = false;
  for (const line of lines) {
    const quoted = lstrip(line).startsWith('>');
    // A run of quoted lines is one multi-line user turn (see toTranscript), not several turns.
    if (isTurnStart(line) && !(quoted && previousQuoted) && current.length > 0) {
      segments.push(current.join('\n'));
      current = [];
    }
    current.push(line);
    previousQuoted = quoted;
  }
  if (current.length > 0) segments.push(current.join('\n'));
  return segments;
}

function isCodeLine(line: string): boolean {
  const s = strip(line);
  if (s === '') return false;
  if (CODE_LINE.some((p) => p.test(s))) return true;
  const length = codePointLength(s);
  if (length <= 10) return false;
  let letters = 0;
  for (const ch of s) if (/\p{L}/u.test(ch)) letters++;
  return letters / length < 0.4;
}

/** The segment without fenced code blocks and code-like lines; the whole segment if nothing is left. */
export function proseOf(segment: string): string {
  const prose: string[] = [];
  let inFence = false;
  for (const line of segment.split('\n')) {
    if (strip(line).startsWith('```')) {
      inFence = !inFence;
      continue;
    }
    if (!inFence && !isCodeLine(line)) prose.push(line);
  }
  const result = strip(prose.join('\n'));
  return result === '' ? segment : result;
}

function countMatches(patterns: readonly RegExp[], text: string): number {
  let n = 0;
  for (const p of patterns) for (const _ of text.matchAll(p)) n++;
  return n;
}

export type Sentiment = 'positive' | 'negative' | 'neutral';

export function sentimentOf(lowerProse: string): Sentiment {
  const seen = new Set(lowerProse.match(/[\p{L}\p{N}_]+/gu) ?? []);
  let positive = 0;
  let negative = 0;
  for (const w of seen) {
    if (POSITIVE_WORDS.has(w)) positive++;
    if (NEGATIVE_WORDS.has(w)) negative++;
  }
  return positive > negative ? 'positive' : negative > positive ? 'negative' : 'neutral';
}

export interface Classification {
  type: MemoryType;
  confidence: number;
  scores: Record<MemoryType, number>;
}

/** The memory type of a segment, or null when no marker scored or confidence is under 0.3. */
export function classifySegment(segment: string): Classification | null {
  const stripped = strip(segment);
  const prose = proseOf(segment).toLowerCase();
  const scores = Object.fromEntries(MEMORY_TYPES.map((t) => [t, countMatches(MARKERS[t], prose)])) as Record<MemoryType, number>;
  let best: MemoryType | null = null;
  for (const t of MEMORY_TYPES) if (scores[t] > 0 && (best === null || scores[t] > scores[best])) best = t;
  if (best === null) return null;
  const length = codePointLength(stripped);
  const bonus = length > 500 ? 2 : length > 200 ? 1 : 0;
  const confidence = Math.min(1, (scores[best] + bonus) / 5);
  if (confidence < MIN_CONFIDENCE) return null;

  let type = best;
  if (best === 'problem') {
    const sentiment = sentimentOf(prose);
    if (RESOLUTION.some((p) => new RegExp(p.source, 'u').test(prose))) {
      type = scores.emotional > 0 && sentiment === 'positive' ? 'emotional' : 'milestone';
    } else if (sentiment === 'positive') {
      if (scores.milestone > 0) type = 'milestone';
      else if (scores.emotional > 0) type = 'emotional';
    }
  }
  return { type, confidence, scores };
}

export function extractGeneralMemories(text: string, limits: ChunkLimits = DEFAULT_CONVERSATION_LIMITS): GeneralMemory[] {
  const memories: GeneralMemory[] = [];
  for (const segment of segmentConversation(text)) {
    const stripped = strip(segment);
    if (codePointLength(stripped) < MIN_SEGMENT_CODE_POINTS) continue;
    const classification = classifySegment(stripped);
    if (classification === null) continue;
    for (const content of codePointSlices(stripped, limits.chunkSize)) {
      memories.push({ content, chunkIndex: memories.length, room: classification.type });
    }
  }
  return memories;
}
