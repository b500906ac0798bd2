import { describe, expect, it } from 'vitest';
import { classifySegment, extractGeneralMemories, proseOf, segmentConversation, sentimentOf } from '../../core/chat/general.js';

describe('general extraction (docs/palace-behaviour.md §5.6)', () => {
  it('classifies a decision by its markers', () => {
    const c = classifySegment('Decided to switch the search service to the union candidate strategy because exact identifiers kept missing.');
    // "strategy" + "because" = 2 decision markers, no other family scores.
    expect(c).toMatchObject({ type: 'decision', confidence: 0.4 });
    expect(c?.scores).toEqual({ decision: 2, preference: 0, milestone: 0, problem: 0, emotional: 0 });
  });

  it('a resolved problem becomes a milestone', () => {
    const c = classifySegment('The bug was a race in the cache; we fixed it by adding a lock and now it works.');
    // problem: bug, "the bug was", "fixed it" = 3; milestone: fixed, "it works" = 2.
    expect(c?.scores.problem).toBe(3);
    expect(c?.scores.milestone).toBe(2);
    expect(c).toMatchObject({ type: 'milestone', confidence: 0.6 });
  });

  it('an unresolved problem stays a problem', () => {
    const c = classifySegment('The deploy keeps failing with a timeout error and nobody knows the root cause yet.');
    expect(c).toMatchObject({ type: 'problem', confidence: 0.6 });
  });

  it('emotional moments and emphasised spans', () => {
    expect(classifySegment("I'm so proud of this team, I love you all, thank you for being amazing.")).toMatchObject({ type: 'emotional', confidence: 0.8 });
    expect(classifySegment('That was *really* something, I wish I could *see* it again')?.scores.emotional).toBe(3);
  });

  it('skips segments without markers or under 0.3 confidence', () => {
    expect(classifySegment('Nothing notable happened during this meeting.')).toBeNull();
    expect(classifySegment('We had lunch at noon because the office was quiet.')).toBeNull();
  });

  it('the length bonus lifts a single marker over the threshold', () => {
    const short = 'They chose this because it was there.';
    expect(classifySegment(short)).toBeNull();
    // 37 + 260 code points > 200: bonus 1, (1 + 1) / 5 = 0.4.
    expect(classifySegment(`${short} ${'Filler words follow here. '.repeat(10)}`)).toMatchObject({ type: 'decision', confidence: 0.4 });
  });

  it('word boundaries are Unicode-aware: a marker glued to a letter does not count', () => {
    expect(classifySegment('überbecause and ébug are not words we know here')).toBeNull();
  });

  it('code is not prose: fenced blocks and code-like lines are ignored', () => {
    expect(proseOf('Here is the snippet:\n```\n// fixed bug error crash\n```\n$ npm run build\nconst x = a.b(1)\nnothing else')).toBe(
      'Here is the snippet:\nnothing else',
    );
    expect(proseOf('```\nonly code\n```')).toBe('```\nonly code\n```');
  });

  it('sentiment compares distinct positive and negative words', () => {
    expect(sentimentOf('fixed fixed fixed but broken')).toBe('neutral');
    expect(sentimentOf('solved and working, no bug')).toBe('positive');
    expect(sentimentOf('stuck, blocked, happy')).toBe('negative');
  });

  it('segments by turn markers when there are at least three', () => {
    const text = 'Human: first question here\nmore of it\nAssistant: an answer\nHuman: second\nAI : another answer';
    expect(segmentConversation(text)).toEqual(['Human: first question here\nmore of it', 'Assistant: an answer', 'Human: second', 'AI : another answer']);
  });

  it('a run of quoted lines stays one segment', () => {
    const text = 'intro\n> line one\n> line two\nanswer\n> next question\nanswer two\n> third\n';
    expect(segmentConversation(text)).toEqual(['intro', '> line one\n> line two\nanswer', '> next question\nanswer two', '> third\n']);
  });

  it('slices long memories at chunk size with one type and a running index', () => {
    const segment = `I prefer tabs over spaces and always use them. ${'x'.repeat(60)}`;
    const memories = extractGeneralMemories(`${segment}\n\nWe decided to go with Postgres because of the team's experience.`, { chunkSize: 50,
      minChunkSize: 30 });
    expect(memories.map((m) => [m.chunkIndex, m.room, [...m.content].length])).toEqual([
      [0, 'preference', 50],
      [1, 'preference', 50],
      [2, 'preference', 7],
      [3, 'decision', 50],
      [4, 'decision', 14],
    ]);
    expect(memories.slice(0, 3).map((m) => m.content).join('')).toBe(segment);
  });
});
