import { describe, expect, it } from 'vitest';
import type { PalaceError } from '../../core/errors.js';
import { conversationDrawers, conversationWing } from '../../palace/eval/file-conversations.js';
import { parseLabelledSet } from '../../palace/eval/labelled-set.js';
import { pairedBootstrap, recallAt, reciprocalRank } from '../../palace/eval/metrics.js';

function refusal(source: string): PalaceError {
  try {
    parseLabelledSet(source);
  } catch (e) {
    return e as PalaceError;
  }
  throw new Error('the set was accepted');
}

const conversation = { id: 'c/1',
  sessions: [{ id: 's1', date: '2026-03-02',
    turns: [{ id: 't1', speaker: 'Mira', text: 'I signed the lease on the flat by the harbour.' }, { id: 't2', speaker: 'Tomas',
      text: 'Congratulations, is that the one with the blue door?' }, { id: 't3', speaker: 'Mira', text: 'Yes, moving day is the 21st of March.' }] }] };

describe('labelled sets', () => {
  it('reads JSON lines of drawer queries, defaulting the category', () => {
    const set = parseLabelledSet(
      '{"query": "tide chart", "expected": ["tide-chart.tsx"]}\n\n{"query": "berths", "expected": ["drawer_x"], "category": "code"}\n',
    );
    expect(set).toEqual({ kind: 'drawers',
      queries: [{ query: 'tide chart', expected: ['tide-chart.tsx'], category: 'all' }, { query: 'berths', expected: ['drawer_x'], category: 'code' }] });
  });

  it('refuses a bad record naming its line, field and rule', () => {
    const e = refusal('{"query": "a", "expected": ["x"]}\n{"query": "b", "expected": []}\n');
    expect([e.field, e.rule]).toEqual(['line 2.expected', 'minimum']);
    expect(refusal('{"query": "a", "expected": ["x"]}\nnot json\n').field).toBe('line 2');
    expect(refusal('').rule).toBe('non_empty');
  });

  it('reads a conversational set, skipping questions without evidence', () => {
    const set = parseLabelledSet(JSON.stringify({ conversations: [conversation], questions: [
      { conversation: 'c/1', question: 'Where did Mira move?', evidence_turns: ['t1'], evidence_sessions: ['s1'], category: 1 },
      { conversation: 'c/1', question: 'What colour is the sky?', evidence_turns: [], evidence_sessions: [] },
    ] }));
    expect(set.kind).toBe('conversations');
    if (set.kind !== 'conversations') return;
    expect(set.skipped).toBe(1);
    expect(set.questions).toEqual([{ conversation: 'c/1', question: 'Where did Mira move?', evidence_turns: ['t1'], evidence_sessions: ['s1'],
      category: '1' }]);
  });

  it('refuses ids repeated across the file and evidence naming nothing of it', () => {
    const twice = { conversations: [conversation, { ...conversation, id: 'c2' }], questions: [] };
    expect([refusal(JSON.stringify(twice)).field, refusal(JSON.stringify(twice)).rule]).toEqual(['sessions.id', 'unique']);
    const unknown = { conversations: [conversation], questions: [{ conversation: 'c/1', question: 'q', evidence_turns: ['t9'] }] };
    expect([refusal(JSON.stringify(unknown)).field, refusal(JSON.stringify(unknown)).rule]).toEqual(['questions.0.evidence_turns', 'known_turn']);
  });
});

describe('filing a conversation', () => {
  it('files exchanges of two turns in a wing of its own, with the session, its date and the turns held', () => {
    const drawers = conversationDrawers(conversation, new Date('2026-12-01T00:00:00Z'));
    expect(conversationWing('c/1')).toBe('eval_c_1');
    expect(drawers.map((d) => d.meta.turn_ids)).toEqual(['t1;t2', 't3']);
    expect(drawers[0]!.content).toBe('Mira: I signed the lease on the flat by the harbour.\nTomas: Congratulations, is that the one with the blue door?');
    expect(drawers[0]!.meta).toMatchObject({ wing: 'eval_c_1', session_id: 's1', session_date: '2026-03-02', filed_at: '2026-03-02T00:00:00.000000Z',
      ingest_mode: 'convos' });
    expect(conversationDrawers(conversation, new Date()).map((d) => d.id)).toEqual(drawers.map((d) => d.id));
  });
});

describe('measures', () => {
  const ranked = [['a'], ['b', 'c'], ['d']];
  it('counts the share of expected items found within k, and the first hit for MRR', () => {
    expect(recallAt(ranked, new Set(['c', 'd', 'z']), 2)).toBeCloseTo(1 / 3, 12);
    expect(recallAt(ranked, new Set(['c', 'd', 'z']), 10)).toBeCloseTo(2 / 3, 12);
    expect(reciprocalRank(ranked, new Set(['c', 'd']))).toBe(0.5);
    expect(reciprocalRank(ranked, new Set(['z']))).toBe(0);
  });

  it('brackets a paired difference with its bootstrap interval, reproducibly', () => {
    const a = Array.from({ length: 200 }, (_, i) => (i % 4 === 0 ? 0 : 1));
    const b = Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? 0 : 1));
    const d = pairedBootstrap(a, b);
    expect(d.mean).toBeCloseTo(0.25, 12);
    expect(d.low).toBeGreaterThan(0.1);
    expect(d.high).toBeLessThan(0.4);
    expect(pairedBootstrap(a, b)).toEqual(d);
    expect(pairedBootstrap(a, a)).toEqual({ mean: 0, low: 0, high: 0 });
  });
});
