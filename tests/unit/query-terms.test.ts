import { describe, expect, it } from 'vitest';
import type { Drawer } from '../../core/drawer.js';
import { commonSpeakerTokens, lexicalQueryTokens } from '../../palace/search/query-terms.js';

const exchange = (session: string, content: string): Drawer => ({
  id: `${session}-${content.length}`,
  content,
  meta: { wing: 'w', room: 'r', source_file: 'chat', chunk_index: 0, added_by: 'a', filed_at: '2026-01-01T00:00:00.000000Z', ingest_mode: 'convos',
    session_id: session, exchange_index: 0 },
});

describe('lexicalQueryTokens', () => {
  it('drops function words from a question and keeps an identifier whole', () => {
    expect(lexicalQueryTokens('How did Mira get to the institute?', 'natural')).toEqual(['mira', 'get', 'institute']);
    expect(lexicalQueryTokens('is_file', 'identifier')).toEqual(['is_file', 'is', 'file']);
  });

  it('drops the tokens it is told to', () => {
    expect(lexicalQueryTokens('Where did Mira move', 'natural', new Set(['mira']))).toEqual(['move']);
  });
});

describe('commonSpeakerTokens', () => {
  it('names the speakers that open turns in more than half of the sessions among the candidates', () => {
    const drawers = [
      exchange('s1', 'Mira: I signed the lease.\nTomas: Congrats!'),
      exchange('s2', 'Mira: Do you know an electrician?\nTomas: Arvid is one.'),
      exchange('s3', 'Tomas: How was the move?\nMira: Fine. Arvid says hi.\nArvid: Hello.'),
    ];
    expect([...commonSpeakerTokens(drawers)].sort()).toEqual(['mira', 'tomas']);
  });

  it('finds none among drawers that are not conversation exchanges', () => {
    const code: Drawer = { ...exchange('s1', 'Note: a line'), meta: { ...exchange('s1', '').meta, ingest_mode: 'projects' } };
    expect(commonSpeakerTokens([code]).size).toBe(0);
  });
});
