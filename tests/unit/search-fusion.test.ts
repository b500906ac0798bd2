import { describe, expect, it } from 'vitest';
import { drawerKind, fusedScores, LEXICAL_WEIGHT, queryShape, type FusionInput } from '../../palace/search/search-fusion.js';

const meta = (source_file: string, extra: Record<string, string> = {}) => ({ wing: 'w', room: 'r', source_file, chunk_index: 0, added_by: 'a',
  filed_at: '2026-01-01T00:00:00.000000Z', ...extra });
/** Candidates of one kind, as [similarity, bm25] pairs. */
const candidates = (kind: FusionInput['kind'], pairs: [similarity: number, bm25: number][]): FusionInput[] =>
  pairs.map(([similarity, bm25]) => ({ similarity, bm25, kind }));
const rank = (query: string, pool: FusionInput[]) => fusedScores(query, pool).map((s, i) => ({ s, i })).sort((a, b) => b.s - a.s).map((x) => x.i);

describe('queryShape', () => {
  it('calls one run of word characters, dots and dashes an identifier', () => {
    for (const q of ['parseHttpUrl', 'event_wait', 'np.linalg.norm', 'MEMPALACE_PALACE', ' readFileSync ']) expect(queryShape(q)).toBe('identifier');
    for (const q of ['how are drawer ids made deterministic', 'event_wait timeout', 'open a file']) expect(queryShape(q)).toBe('natural');
  });
});

describe('drawerKind', () => {
  it('tells conversation exchanges, prose and code apart from the mode and the source file', () => {
    expect(drawerKind(meta('/chats/a.jsonl', { ingest_mode: 'convos' }))).toBe('conversation');
    expect(drawerKind(meta('/docs/a.pdf', { ingest_mode: 'extract' }))).toBe('prose');
    expect(drawerKind(meta('/repo/README.md'))).toBe('prose');
    expect(drawerKind(meta(''))).toBe('prose');
    expect(drawerKind(meta('/repo/core/ids.ts'))).toBe('code');
    expect(drawerKind(meta('https://host:8443/repo.git:src/main.py'))).toBe('code');
  });
});

describe('fusedScores', () => {
  it('keeps the vector order when no candidate matches a word of the query', () => {
    const pool = [0.4, 0.7, 0.55].map((similarity) => ({ similarity, bm25: 0, kind: 'code' as const }));
    expect(rank('open a file', pool)).toEqual([1, 2, 0]);
  });

  it('lets words decide between semantically close candidates', () => {
    const pool = candidates('prose', [[0.61, 0], [0.6, 4], [0.2, 0], [0.25, 0]]);
    expect(rank('when did Mira join the ledger team', pool)[0]).toBe(1);
  });

  it('never lets a candidate that only repeats the query words outrank a semantically strong one', () => {
    // Drawer 0 holds every word of the query (a script printing it) at a below-average similarity;
    // among 80 candidates its lexical z-score is extreme (about 8.9). Without the lift cap it would
    // rank first (fused 1.89 against 1.50); capped, its words lift it only as far as its meaning allows.
    const others = Array.from({ length: 78 }, (_, i) => ({ similarity: 0.3 + 0.1 * Math.sin(i * 1.7), bm25: 0, kind: 'conversation' as const }));
    const pool: FusionInput[] = [{ similarity: 0.22, bm25: 30, kind: 'conversation' }, { similarity: 0.46, bm25: 0, kind: 'conversation' }, ...others];
    const order = rank('how are drawer ids made deterministic', pool);
    expect(order[0]).toBe(1);
    expect(order.indexOf(0)).toBeGreaterThan(order.indexOf(1));
  });

  it('gives an identifier query its exact match over closer embeddings', () => {
    const pool = candidates('code', [[0.45, 0], [0.42, 0.3], [0.36, 6], [0.3, 0]]);
    expect(rank('parseHttpUrl', pool)[0]).toBe(2);
    // The same pool under a natural-language question keeps the closer embedding first.
    expect(LEXICAL_WEIGHT.natural.code).toBeLessThan(LEXICAL_WEIGHT.identifier.code);
    expect(rank('how is a url parsed', pool)[0]).toBe(0);
  });

  it('scores a one-candidate pool and an empty pool without dividing by zero', () => {
    expect(fusedScores('x', [{ similarity: 0.5, bm25: 1, kind: 'code' }])).toEqual([0]);
    expect(fusedScores('x', [])).toEqual([]);
  });
});

describe('conversation context', () => {
  const exchange = (session: string, position: number, similarity: number): FusionInput => ({ similarity, bm25: 0, kind: 'conversation',
    place: { session, position } });

  it('lifts an exchange beside the best match of its session over an equal one in another session', () => {
    // Exchanges 1 and 2 of "b" score alike; 2 sits next to the session's best match (3) and takes its share.
    const pool = [exchange('a', 0, 0.3), exchange('a', 1, 0.45), exchange('b', 2, 0.45), exchange('b', 3, 0.7), exchange('c', 0, 0.2), exchange('c', 5, 0.25)];
    const scores = fusedScores('when did the move happen', pool);
    expect(scores[2]).toBeGreaterThan(scores[1]!);
    expect(rank('when did the move happen', pool)[0]).toBe(3);
  });

  it('leaves code and prose candidates as fused', () => {
    const pool: FusionInput[] = [{ similarity: 0.5, bm25: 0, kind: 'code' }, { similarity: 0.4, bm25: 0, kind: 'prose' }, exchange('a', 0, 0.6),
      exchange('a', 1, 0.3)];
    const plain = fusedScores('q', pool.map(({ place: _place, ...c }) => c));
    const scores = fusedScores('q', pool);
    expect(scores.slice(0, 2)).toEqual(plain.slice(0, 2));
    expect(scores[3]).not.toBe(plain[3]);
  });

  it('places mined exchanges by file and chunk, hook and eval exchanges by session and exchange', async () => {
    const { exchangePlace } = await import('../../palace/search/search-fusion.js');
    expect(exchangePlace(meta('/chats/a.txt', { ingest_mode: 'convos' }))).toEqual({ session: '/chats/a.txt', position: 0 });
    expect(exchangePlace({ ...meta('/t.jsonl', { ingest_mode: 'convos', session_id: 's1' }), exchange_index: 4 })).toEqual({ session: '/t.jsonl#s1',
      position: 4 });
    expect(exchangePlace(meta('/repo/a.ts'))).toBeUndefined();
  });
});

describe('words only add', () => {
  it('does not push a semantically close candidate down for missing the query words', () => {
    const pool = candidates('prose', [[0.7, 0], [0.4, 3], [0.4, 3], [0.3, 3]]);
    const scores = fusedScores('a paraphrase of the passage', pool);
    const semantic = fusedScores('a paraphrase of the passage', pool.map((c) => ({ ...c, bm25: 0 })));
    expect(scores[0]).toBe(semantic[0]);
  });
});

describe('dates named in the query', () => {
  const day = (iso: string) => Date.parse(iso);
  const exchange = (session: string, date: string, similarity: number): FusionInput => ({ similarity, bm25: 0, kind: 'conversation',
    place: { session, position: 0 }, sessionDate: day(date) });

  it('lifts an exchange of a session in the named month over a closer one outside it, softly', () => {
    const pool = [exchange('a', '2026-03-10', 0.52), exchange('b', '2026-05-10', 0.5), exchange('c', '2026-09-30', 0.2), exchange('d', '2026-01-02', 0.1)];
    expect(rank("what was Mira's news in May", pool)[0]).toBe(1);
    expect(rank("what was Mira's news", pool)[0]).toBe(0);
    // Soft: a far better match outside the window still wins.
    const fillers = Array.from({ length: 12 }, (_, i) => exchange(`f${i}`, '2026-02-01', 0.2 + 0.01 * i));
    const far = [exchange('a', '2026-03-10', 0.9), exchange('b', '2026-05-10', 0.5), ...fillers];
    expect(rank("what was Mira's news in May", far)[0]).toBe(0);
  });

  it('gives no bonus to drawers without a session date', () => {
    const pool: FusionInput[] = [{ similarity: 0.5, bm25: 0, kind: 'code' }, { similarity: 0.4, bm25: 0, kind: 'code' }];
    expect(fusedScores('what changed in May 2026', pool)).toEqual(fusedScores('what changed', pool));
  });
});
