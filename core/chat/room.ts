/**
 * The room of a conversation file in exchange mode (docs/palace-behaviour.md §5.7): the topic whose keywords occur
 * most often (as substrings, each counted once) in the first 3,000 code points of the
 * lowercased transcript; ties go to the earlier topic, no hit gives `general`.
 */
import { codePointPrefix } from '../chunking.js';

export const CONVERSATION_ROOM_KEYWORDS: readonly (readonly [string, readonly string[]])[] = [
  ['technical', ['code', 'python', 'function', 'bug', 'error', 'api', 'database', 'server', 'deploy', 'git', 'test', 'debug', 'refactor']],
  ['architecture', ['architecture', 'design', 'pattern', 'structure', 'schema', 'interface', 'module', 'component', 'service', 'layer']],
  ['planning', ['plan', 'roadmap', 'milestone', 'deadline', 'priority', 'sprint', 'backlog', 'scope', 'requirement', 'spec']],
  ['decisions', ['decided', 'chose', 'picked', 'switched', 'migrated', 'replaced', 'trade-off', 'alternative', 'option', 'approach']],
  ['problems', ['problem', 'issue', 'broken', 'failed', 'crash', 'stuck', 'workaround', 'fix', 'solved', 'resolved']],
];

export const ROOM_SAMPLE_CODE_POINTS = 3000;

export function conversationRoom(transcript: string): string {
  const sample = codePointPrefix(transcript, ROOM_SAMPLE_CODE_POINTS).toLowerCase();
  let best = 'general';
  let bestScore = 0;
  for (const [room, keywords] of CONVERSATION_ROOM_KEYWORDS) {
    const score = keywords.filter((k) => sample.includes(k)).length;
    if (score > bestScore) {
      best = room;
      bestScore = score;
    }
  }
  return best;
}
