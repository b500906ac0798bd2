import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chunkConversation } from '../../core/chat/conversation.js';
import { chunkExchanges } from '../../core/chat/exchange.js';
import { normaliseConversation } from '../../core/chat/normalise.js';
import { conversationRoom } from '../../core/chat/room.js';

const fixture = (name: string): Buffer => readFileSync(new URL(`../fixtures/chat/${name}`, import.meta.url));

describe('chunkExchanges (docs/palace-behaviour.md §5.5, quirks fixed)', () => {
  it('keeps the preamble, line breaks and text after a --- rule; drops units at or under the floor', () => {
    const chunks = chunkExchanges(fixture('quoted-transcript.md').toString('utf8'));
    expect(chunks).toEqual([
      { content: 'Exported from the team wiki — design review, 3 May', chunkIndex: 0 },
      {
        content: '> How do I rotate the API keys safely?\nUse the vault CLI.\nThen restart the workers.\n---\nFootnote: see runbook.',
        chunkIndex: 1,
      },
      { content: '> And the database password?\nSame procedure.', chunkIndex: 2 },
    ]);
  });

  it('a unit exactly at the floor is dropped, one code point over is kept', () => {
    const limits = { chunkSize: 800, minChunkSize: 10 };
    // "> q\nabcdef" is 10 code points; "> q\nabcdefg" is 11.
    expect(chunkExchanges('> q\nabcdef\n\n> q\nabcdefg\n\n> x\n', limits).map((c) => c.content)).toEqual(['> q\nabcdefg']);
  });

  it('slices long units at code-point offsets, without overlap or stripping', () => {
    const transcript = '> 😀😀😀😀😀😀\nab😀cdefgh😀ij\n\n> second question?\n\n> third question?\n';
    const chunks = chunkExchanges(transcript, { chunkSize: 10, minChunkSize: 3 });
    expect(chunks.map((c) => c.content)).toEqual([
      '> 😀😀😀😀😀😀\na',
      'b😀cdefgh😀i',
      'j',
      '> second q',
      'uestion?',
      '> third qu',
      'estion?',
    ]);
    expect(chunks.map((c) => c.chunkIndex)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('a run of quoted lines is one user turn', () => {
    const chunks = chunkExchanges('> first line of the question\n> second line of it\nThe answer.\n\n> next\nok\n> last\n', { chunkSize: 800,
      minChunkSize: 5 });
    expect(chunks.map((c) => c.content)).toEqual(['> first line of the question\n> second line of it\nThe answer.', '> next\nok', '> last']);
  });

  it('falls back to paragraphs when there are fewer than three quoted lines', () => {
    const normalised = normaliseConversation(fixture('codex-rollout.jsonl'), 'rollout.jsonl');
    const chunks = chunkExchanges(normalised.transcript);
    expect(chunks.map((c) => c.content)).toEqual([
      '> The tile cache grows without bound. Can you cap it at 512 entries with LRU eviction?\n`TileCache` wraps a plain `HashMap`. I replaced it with an `lru::LruCache` capped at 512 entries and added a test that inserts 600 tiles and checks the oldest 88 were evicted.',
      '> Does eviction count as a cache miss in the metrics? Ça compte pour le tableau de bord.\nNo: evictions have their own counter, `tiles_evicted_total`, so the hit ratio on the dashboard is unchanged.',
    ]);
  });

  it('one long paragraph of more than 20 lines is cut into groups of 25 lines', () => {
    const lines = Array.from({ length: 60 }, (_, i) => `log line ${String(i + 1).padStart(2, '0')} of the nightly run`);
    const chunks = chunkExchanges(lines.join('\n'), { chunkSize: 5000, minChunkSize: 30 });
    expect(chunks.map((c) => c.content)).toEqual([lines.slice(0, 25).join('\n'), lines.slice(25, 50).join('\n'), lines.slice(50).join('\n')]);
  });

  it('chunks a Claude Code session into one drawer per exchange', () => {
    const { transcript } = normaliseConversation(fixture('claude-code-session.jsonl'), 's.jsonl');
    const chunks = chunkExchanges(transcript);
    expect(chunks).toHaveLength(3);
    expect(chunks[0]!.content.startsWith('> Why does the nightly export job fail with ECONNRESET? 🤔\nLet me look')).toBe(true);
    expect(chunks[0]!.content.endsWith('[Edit /home/mira/src/ledger/jobs/export.ts]')).toBe(true);
    expect(chunks[2]).toEqual({ content: '> Thanks, ship it 🚀\nDone: both timeouts are now 120 s.', chunkIndex: 2 });
  });
});

describe('conversationRoom (docs/palace-behaviour.md §5.7)', () => {
  it.each([
    ['we fixed the crash with a workaround', 'problems'],
    ['the api design', 'technical'],
    ['roadmap and sprint backlog for the spec', 'planning'],
    ['we decided and switched approach', 'decisions'],
    ['the service layer and its interface', 'architecture'],
    ['lunch on friday', 'general'],
  ])('%s → %s', (text, room) => {
    expect(conversationRoom(text)).toBe(room);
  });

  it('matches case-insensitively, as substrings', () => {
    expect(conversationRoom('DEBUGGING the Database')).toBe('technical');
  });

  it('only the first 3,000 code points count', () => {
    expect(conversationRoom(`${'😀'.repeat(2995)}bug`)).toBe('technical');
    expect(conversationRoom(`${'😀'.repeat(3000)}bug`)).toBe('general');
  });

  it('the Claude Code fixture is about a problem', () => {
    const { transcript } = normaliseConversation(fixture('claude-code-session.jsonl'), 's.jsonl');
    expect(conversationRoom(transcript)).toBe('problems');
  });
});

describe('chunkConversation: bytes to drawer-ready chunks or a skip reason', () => {
  it('exchange mode gives every chunk the file room', () => {
    const result = chunkConversation(fixture('claude-code-session.jsonl'), 'session.jsonl');
    expect(result.status).toBe('ok');
    if (result.status !== 'ok') return;
    expect(result.format).toBe('claude-code-jsonl');
    expect(result.chunks.map((c) => [c.chunkIndex, c.room])).toEqual([
      [0, 'problems'],
      [1, 'problems'],
      [2, 'problems'],
    ]);
  });

  it('general mode gives each chunk its memory type as room', () => {
    const result = chunkConversation(fixture('plain-notes.txt'), 'notes.txt', 'general');
    expect(result.status).toBe('ok');
    if (result.status !== 'ok') return;
    expect(result.chunks.map((c) => c.room)).toEqual(['decision', 'milestone', 'preference']);
  });

  it('content shorter than the minimum is skipped as too_short', () => {
    expect(chunkConversation('hi there', 'a.txt')).toMatchObject({ status: 'skipped', reason: 'too_short', format: 'plain-text' });
  });

  it('a file whose units are all under the floor is skipped as no_chunks', () => {
    expect(chunkConversation('> short one\n\n> second q\n\n> third one', 'a.txt')).toMatchObject({ status: 'skipped', reason: 'no_chunks' });
  });
});
