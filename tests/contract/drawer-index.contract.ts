/**
 * The DrawerIndex contract: what every adapter (SQLite embedded, OpenSearch cluster) must do,
 * observed only through the port. Each adapter's `*.test.ts` calls
 * `describeDrawerIndexContract` with a function that opens a fresh, empty index.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Drawer, DrawerWrite } from '../../core/drawer.js';
import { PalaceError } from '../../core/errors.js';
import { lexicalTokens } from '../../core/lexical.js';
import type { CandidatePool, DrawerFilter, VectorHit } from '../../stores/ports/drawers/drawer-index.js';
import type { DrawerStore } from '../../stores/ports/palace-stores.js';
import type { FileState } from '../../stores/ports/drawers/file-states.js';
import { cosineDistance, dot } from '../../core/vector.js';
import { bruteForce, codePointCompare, drawer, filedAt, nearVector, randomUnitVector, seededRandom } from './drawer-index.fixtures.js';

export interface OpenedDrawerIndex {
  index: DrawerStore;
  /** Opens the same store again (after the caller closed `index`), to observe persistence. */
  reopen: () => Promise<DrawerStore>;
  /** Closes every handle still open and removes the store. */
  cleanup: () => Promise<void>;
}

async function expectPalaceError(p: Promise<unknown>, code: string, field?: RegExp): Promise<PalaceError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(PalaceError);
  const pe = e as PalaceError;
  expect(pe.code).toBe(code);
  if (field) expect(pe.field).toMatch(field);
  return pe;
}

async function allPages<T>(fetch: (after: string | undefined) => Promise<{ items: T[]; next?: string }>): Promise<{ items: T[]; pages: number }> {
  const items: T[] = [];
  let after: string | undefined;
  let pages = 0;
  for (;;) {
    const page = await fetch(after);
    pages++;
    items.push(...page.items);
    if (page.next === undefined) return { items, pages };
    after = page.next;
    if (pages > 10_000) throw new Error('cursor never ended');
  }
}

function state(wing: string, sourceFile: string, drawerCount: number, extra?: FileState['extra']): FileState {
  return { wing, source_file: sourceFile, size: 100 + drawerCount, mtime_ms: 1_767_225_600_000.5, content_sha256: 'ab'.repeat(32), drawer_count: drawerCount,
    mined_at: filedAt(1), ...(extra ? { extra } : {}) };
}

/** A varied corpus for the filter tests: every row's metadata is a function of its index. */
function filterCorpus(dimension: number): DrawerWrite[] {
  const rnd = seededRandom(7);
  return Array.from({ length: 60 },
    (_, i) =>
      drawer(`f${String(i).padStart(3, '0')}`, `shared marker row ${i} ${i % 2 === 0 ? 'even' : 'odd'}`, randomUnitVector(rnd, dimension), {
        wing: i % 3 === 0 ? 'wing_x' : 'wing_y',
        room: `room_${i % 4}`,
        source_file: `/src/file_${i % 5}.ts`,
        chunk_index: i % 7,
        filed_at: filedAt(i * 10),
        agent: i % 2 === 0 ? 'alice' : 'bob',
        is_sentinel: i % 11 === 0,
        ...(i % 6 === 1 ? { parent_drawer_id: 'logical_p' } : {}),
        ...(i % 6 === 2 ? { parent_entry_id: 'logical_p' } : {}),
        ...(i % 6 === 3 ? { parent_drawer_id: 'logical_q' } : {}),
      }));
}

const FILTER_CASES: { name: string; filter: DrawerFilter; keep: (d: DrawerWrite) => boolean }[] = [
  { name: 'wing', filter: { wing: 'wing_x' }, keep: (d) => d.meta.wing === 'wing_x' },
  { name: 'room', filter: { room: 'room_1' }, keep: (d) => d.meta.room === 'room_1' },
  { name: 'wing and room', filter: { wing: 'wing_y', room: 'room_2' }, keep: (d) => d.meta.wing === 'wing_y' && d.meta.room === 'room_2' },
  { name: 'sourceFile', filter: { sourceFile: '/src/file_3.ts' }, keep: (d) => d.meta.source_file === '/src/file_3.ts' },
  { name: 'parentId', filter: { parentId: 'logical_p' }, keep: (d) => d.meta.parent_drawer_id === 'logical_p' || d.meta.parent_entry_id === 'logical_p' },
  { name: 'since', filter: { since: filedAt(300) }, keep: (d) => d.meta.filed_at >= filedAt(300) },
  { name: 'before', filter: { before: filedAt(200) }, keep: (d) => d.meta.filed_at < filedAt(200) },
  { name: 'since and before', filter: { since: filedAt(100), before: filedAt(250) },
    keep: (d) => d.meta.filed_at >= filedAt(100) && d.meta.filed_at < filedAt(250) },
  { name: 'meta string', filter: { meta: { agent: 'alice' } }, keep: (d) => d.meta.agent === 'alice' },
  { name: 'meta number', filter: { meta: { chunk_index: 3 } }, keep: (d) => d.meta.chunk_index === 3 },
  { name: 'meta boolean', filter: { meta: { is_sentinel: true } }, keep: (d) => d.meta.is_sentinel === true },
  { name: 'everything combined', filter: { wing: 'wing_y', meta: { agent: 'bob' }, since: filedAt(50) },
    keep: (d) => d.meta.wing === 'wing_y' && d.meta.agent === 'bob' && d.meta.filed_at >= filedAt(50) },
];

/**
 * Checks a union pool against the separate calls: the same knn hits, the tokens chosen from them,
 * the lexical rows of those tokens in order with the exact distance of each row's stored vector
 * (rows without one left out), and the scope's count. Returns the hits the tokens were chosen from.
 */
async function expectPoolOfSeparateCalls(index: DrawerStore, vector: Float32Array, k: number, filter: DrawerFilter | undefined,
  tokensOf: (hits: readonly VectorHit[]) => string[]): Promise<CandidatePool> {
  const asked: (readonly VectorHit[])[] = [];
  const pool = await index.candidatePool({ vector, k, filter, lexicalTokens: (hits) => (asked.push(hits), tokensOf(hits)) });
  const hits = await index.knn(vector, k, filter);
  expect(pool.vector).toEqual(hits);
  expect(asked[asked.length - 1]).toEqual(hits);
  expect(pool.tokens).toEqual(tokensOf(hits));
  const rows = pool.tokens.length === 0 ? [] : await index.lexical(pool.tokens, k, filter);
  const stored = await index.embeddings([...rows, ...hits.map((h) => h.drawer)].map((d) => d.id));
  expect(pool.lexical.map((h) => h.drawer)).toEqual(rows.filter((d) => stored.has(d.id)));
  for (const h of [...pool.vector, ...pool.lexical]) expect(h.distance).toBe(cosineDistance(vector, stored.get(h.drawer.id)!));
  expect(pool.inScope).toBe(await index.count(filter));
  return pool;
}

export function describeDrawerIndexContract(adapterName: string, open: () => Promise<OpenedDrawerIndex>): void {
  describe(`DrawerIndex contract: ${adapterName}`, () => {
    let opened: OpenedDrawerIndex;
    let index: DrawerStore;
    let dim: number;

    describe('single-store behaviour', () => {
      beforeEach(async () => {
        opened = await open();
        index = opened.index;
        dim = index.dimension;
      });
      afterEach(async () => {
        await opened.cleanup();
      });

      it('keeps the model record as a compare-and-set value that survives a reopen', async () => {
        const fp32 = { name: 'model-a', dimension: dim, weightsSha256: 'a'.repeat(64) };
        const int8 = { name: 'model-b', dimension: dim, weightsSha256: 'b'.repeat(64) };
        expect(await index.readModel()).toBeUndefined();
        expect(await index.writeModel({ model: fp32 }, { model: int8 })).toBe(false);
        expect(await index.writeModel({ model: fp32 }, undefined)).toBe(true);
        expect(await index.writeModel({ model: int8 }, undefined)).toBe(false);
        const converting = { model: fp32, reembed: { target: int8, jobId: 'job-1' } };
        expect(await index.writeModel(converting, { model: int8 })).toBe(false);
        expect(await index.writeModel(converting, { model: fp32 })).toBe(true);
        expect(await index.readModel()).toEqual(converting);
        await expectPalaceError(index.writeModel({ model: { ...int8, name: '' } }, converting), 'invalid_argument', /^model\.name$/);
        await index.close();
        index = await opened.reopen();
        expect(await index.readModel()).toEqual(converting);
        expect(await index.writeModel({ model: int8 }, converting)).toBe(true);
        expect(await index.readModel()).toEqual({ model: int8 });
      });

      it('replaces the embeddings of stored rows only, keeping content and metadata', async () => {
        const rnd = seededRandom(7);
        const rows = [drawer('re_a', 'alpha', randomUnitVector(rnd, dim)), drawer('re_b', 'beta', randomUnitVector(rnd, dim))];
        await index.upsert(rows);
        const fresh = randomUnitVector(rnd, dim);
        expect(await index.replaceEmbeddings(new Map([['re_a', fresh], ['re_missing', randomUnitVector(rnd, dim)]]))).toBe(1);
        const stored = await index.embeddings(['re_a', 're_b', 're_missing']);
        expect([...stored.keys()].sort()).toEqual(['re_a', 're_b']);
        expect(dot(stored.get('re_a')!, fresh)).toBeCloseTo(1, 5);
        expect(dot(stored.get('re_b')!, rows[1]!.embedding)).toBeCloseTo(1, 5);
        expect((await index.get(['re_a']))[0]).toMatchObject({ id: 're_a', content: 'alpha', meta: rows[0]!.meta });
        const [nearest] = await index.knn(fresh, 1);
        expect(nearest!.drawer.id).toBe('re_a');
        expect(nearest!.distance).toBeCloseTo(0, 4);
        await expectPalaceError(index.replaceEmbeddings(new Map([['re_b', new Float32Array(dim)]])), 'invalid_argument', /^vectors/);
        expect(await index.replaceEmbeddings(new Map())).toBe(0);
      });

      it('resets the vector length: the old vectors go, rows stay, the new length is taken and survives a reopen', async () => {
        const rnd = seededRandom(11);
        const rows = [drawer('len_a', 'alpha', randomUnitVector(rnd, dim)), drawer('len_b', 'beta', randomUnitVector(rnd, dim))];
        await index.upsert(rows);
        await index.resetEmbeddings(dim);
        expect((await index.embeddings(['len_a'])).size).toBe(1);
        const wide = dim * 2;
        await index.resetEmbeddings(wide);
        expect(index.dimension).toBe(wide);
        expect((await index.embeddings(['len_a', 'len_b'])).size).toBe(0);
        expect((await index.get(['len_a', 'len_b'])).map((d) => d.content)).toEqual(['alpha', 'beta']);
        expect(await index.count()).toBe(2);
        await expectPalaceError(index.replaceEmbeddings(new Map([['len_a', randomUnitVector(rnd, dim)]])), 'invalid_argument', /^vectors/);
        const fresh = randomUnitVector(rnd, wide);
        expect(await index.replaceEmbeddings(new Map([['len_a', fresh]]))).toBe(1);
        const [nearest] = await index.knn(fresh, 1);
        expect(nearest!.drawer.id).toBe('len_a');
        expect(nearest!.distance).toBeCloseTo(0, 4);
        // A set's record keeps its members.
        const set = { name: 'a:0.5,b:0.5', dimension: wide, weightsSha256: 'c'.repeat(64), encoders: [
          { name: 'a', dimension: dim, weight: 0.5, weightsSha256: 'a'.repeat(64) },
          { name: 'b', dimension: dim, weight: 0.5, weightsSha256: 'b'.repeat(64) },
        ] };
        expect(await index.writeModel({ model: set }, undefined)).toBe(true);
        await index.close();
        index = await opened.reopen();
        expect(index.dimension).toBe(wide);
        expect(await index.readModel()).toEqual({ model: set });
        expect((await index.embeddings(['len_a', 'len_b'])).size).toBe(1);
        await index.upsert([drawer('len_c', 'gamma', randomUnitVector(rnd, wide))]);
        expect((await index.knn(fresh, 1))[0]!.drawer.id).toBe('len_a');
      });

      it('round-trips content verbatim and metadata with its types', async () => {
        const rnd = seededRandom(1);
        const content = '  Line one\r\nline two 😀 with emoji\tand tab, e\u0301 combining, 日本語\n\n';
        const a = drawer('rt_a', content, randomUnitVector(rnd, dim), {
          source_file: '/home/u/proj/a.md',
          chunk_index: 3,
          line_start: 10,
          source_mtime: 1767225600.25,
          is_sentinel: false,
          normalize_version: 2,
          entities: 'Alice;Bob',
          hall: '',
        });
        const b = drawer('rt_b', 'second', randomUnitVector(rnd, dim));
        await index.upsert([a, b]);
        const got = await index.get(['rt_b', 'missing', 'rt_a']);
        expect(got.map((d) => d.id)).toEqual(['rt_b', 'rt_a']);
        const back = got[1]!;
        expect(back.content).toBe(content);
        expect(back.meta).toEqual(a.meta);
        expect(typeof back.meta.chunk_index).toBe('number');
        expect(back.meta.is_sentinel).toBe(false);
        expect(back.meta.source_mtime).toBe(1767225600.25);
        expect(await index.get([])).toEqual([]);
        expect(await index.count()).toBe(2);
      });

      it('replaces a row by id on upsert', async () => {
        const rnd = seededRandom(2);
        const oldVec = randomUnitVector(rnd, dim);
        const newVec = randomUnitVector(rnd, dim);
        await index.upsert([drawer('same', 'old words alphaword', oldVec, { room: 'before' })]);
        await index.upsert([drawer('same', 'new words betaword', newVec, { room: 'after' })]);
        expect(await index.count()).toBe(1);
        const [d] = await index.get(['same']);
        expect(d!.content).toBe('new words betaword');
        expect(d!.meta.room).toBe('after');
        const hits = await index.knn(newVec, 1);
        expect(hits[0]!.drawer.id).toBe('same');
        expect(hits[0]!.distance).toBeCloseTo(0, 5);
        expect(await index.lexical(['alphaword'], 5)).toEqual([]);
        expect((await index.lexical(['betaword'], 5)).map((x) => x.id)).toEqual(['same']);
        expect(await index.taxonomy()).toEqual([{ wing: 'wing_a', room: 'after', count: 1 }]);
      });

      it('writes a batch all or nothing and names the bad field', async () => {
        const rnd = seededRandom(3);
        const keep = drawer('keep', 'original text', randomUnitVector(rnd, dim));
        await index.upsert([keep]);
        const batch = [
          drawer('ok1', 'fine', randomUnitVector(rnd, dim)),
          drawer('keep', 'would overwrite', randomUnitVector(rnd, dim)),
          drawer('bad', 'wrong dimension', randomUnitVector(rnd, dim + 1)),
        ];
        const err = await expectPalaceError(index.upsert(batch), 'invalid_argument', /embedding/);
        expect(err.field).toContain('[2]');
        expect(await index.count()).toBe(1);
        expect(await index.get(['ok1', 'bad'])).toEqual([]);
        expect((await index.get(['keep']))[0]!.content).toBe('original text');
        await expectPalaceError(index.upsert([drawer('nowing', 'x', randomUnitVector(rnd, dim), { wing: '' })]), 'invalid_argument', /wing/);
        expect(await index.count()).toBe(1);
      });

      it('deletes by id and by filter, and refuses an empty filter', async () => {
        const rnd = seededRandom(4);
        const rows = [
          drawer('d1', 'zeta one', randomUnitVector(rnd, dim), { wing: 'w1', source_file: '/s/a' }),
          drawer('d2', 'zeta two', randomUnitVector(rnd, dim), { wing: 'w1', source_file: '/s/a' }),
          drawer('d3', 'zeta three', randomUnitVector(rnd, dim), { wing: 'w1', source_file: '/s/b' }),
          drawer('d4', 'zeta four', randomUnitVector(rnd, dim), { wing: 'w2', source_file: '/s/a' }),
          drawer('d5', 'zeta five', randomUnitVector(rnd, dim), { wing: 'w2', source_file: '/s/c' }),
        ];
        await index.upsert(rows);
        expect(await index.delete(['d5', 'nope'])).toBe(1);
        await expectPalaceError(index.deleteWhere({}), 'invalid_argument', /^filter/);
        expect(await index.count()).toBe(4);
        expect(await index.deleteWhere({ sourceFile: '/s/a', wing: 'w1' })).toBe(2);
        expect((await index.list({}, 0, 10)).items.map((d) => d.id)).toEqual(['d3', 'd4']);
        expect(await index.deleteWhere({ wing: 'w2' })).toBe(1);
        expect(await index.deleteWhere({ wing: 'w2' })).toBe(0);
        expect((await index.knn(rows[0]!.embedding, 10)).map((h) => h.drawer.id)).toEqual(['d3']);
        expect((await index.lexical(['zeta'], 10)).map((d) => d.id)).toEqual(['d3']);
        expect(await index.embeddings(['d1', 'd3'])).toEqual(new Map([['d3', rows[2]!.embedding]]));
      });

      it('returns the nearest rows first with exact cosine distances', async () => {
        const rnd = seededRandom(5);
        const rows = Array.from({ length: 80 }, (_, i) => drawer(`n${i}`, `row ${i}`, randomUnitVector(rnd, dim)));
        await index.upsert(rows);
        for (let q = 0; q < 5; q++) {
          const query = nearVector(rnd, rows[q * 7]!.embedding, 0.05);
          const hits = await index.knn(query, 10);
          const expected = bruteForce(rows, query, 10);
          expect(hits.map((h) => h.drawer.id)).toEqual(expected.map((e) => e.id));
          hits.forEach((h, i) => expect(h.distance).toBeCloseTo(expected[i]!.distance, 5));
          for (let i = 1; i < hits.length; i++) expect(hits[i]!.distance).toBeGreaterThanOrEqual(hits[i - 1]!.distance);
        }
        expect(await index.knn(rows[0]!.embedding, 500)).toHaveLength(80);
        await expectPalaceError(index.knn(randomUnitVector(rnd, dim + 3), 5), 'invalid_argument', /vector/);
      });

      it('finds identifier parts lexically and respects filters', async () => {
        const rnd = seededRandom(6);
        await index.upsert([
          drawer('lx1', 'const u = parseHttpUrl(input);', randomUnitVector(rnd, dim), { wing: 'code' }),
          drawer('lx2', 'import os\nos.path.join(a, b)', randomUnitVector(rnd, dim), { wing: 'code' }),
          drawer('lx3', 'Grüezi from Zürich', randomUnitVector(rnd, dim), { wing: 'notes' }),
          drawer('lx4', 'an http request from the notes wing', randomUnitVector(rnd, dim), { wing: 'notes' }),
          drawer('lx5', 'nothing relevant here', randomUnitVector(rnd, dim), { wing: 'notes' }),
        ]);
        const ids = async (query: string, filter?: DrawerFilter): Promise<string[]> =>
          (await index.lexical(lexicalTokens(query), 10, filter)).map((d) => d.id).sort();
        expect(await ids('http')).toEqual(['lx1', 'lx4']);
        expect(await ids('http', { wing: 'code' })).toEqual(['lx1']);
        expect(await ids('parseHttpUrl')).toEqual(['lx1', 'lx4']);
        expect(await ids('os.path.join')).toEqual(['lx2']);
        expect(await ids('path')).toEqual(['lx2']);
        expect(await ids('zürich')).toEqual(['lx3']);
        expect(await ids('ZÜRICH', { wing: 'code' })).toEqual([]);
        expect(await ids('absent')).toEqual([]);
        expect(await index.lexical([], 10)).toEqual([]);
        expect(await index.lexical(lexicalTokens('http'), 1)).toHaveLength(1);
      });

      it('matches lexical candidates on the tokens held by fewer than half the rows, or on all when none is', async () => {
        const rnd = seededRandom(7);
        // 6 rows: "the" and "plain" in exactly half (bm25 idf clamped), "ant" and "zebra" in a third.
        const texts = ['the zebra', 'the ant', 'the plain words', 'other plain words', 'a plain zebra', 'an ant'];
        await index.upsert(texts.map((t, i) => drawer(`cm${i + 1}`, t, randomUnitVector(rnd, dim))));
        const ids = async (tokens: string[]): Promise<string[]> => (await index.lexical(tokens, 10)).map((d) => d.id).sort();
        expect(await ids(['the', 'zebra'])).toEqual(['cm1', 'cm5']);
        expect(await ids(['the', 'ant', 'zebra'])).toEqual(['cm1', 'cm2', 'cm5', 'cm6']);
        expect(await ids(['THE', 'Zebra'])).toEqual(['cm1', 'cm5']);
        expect(await ids(['the'])).toEqual(['cm1', 'cm2', 'cm3']);
        expect(await ids(['absent', 'the'])).toEqual(['cm1', 'cm2', 'cm3']);
        expect(await ids(['absent', 'the', 'zebra'])).toEqual(['cm1', 'cm5']);
        expect(await ids(['the', 'plain'])).toEqual(['cm1', 'cm2', 'cm3', 'cm4', 'cm5']);
        // Frequencies follow deletes: 4 rows left, "the" in 3, "plain" in 2, "ant" and "words" in 1.
        await index.delete(['cm4', 'cm6']);
        expect(await ids(['the', 'ant'])).toEqual(['cm2']);
        expect(await ids(['plain', 'ant'])).toEqual(['cm2']);
        expect(await ids(['plain', 'words'])).toEqual(['cm3']);
      });

      it('gives a union pool as the separate calls do, its lexical tokens chosen from the vector hits', async () => {
        const rnd = seededRandom(12);
        // "the" in nine rows of ten (matched only when nothing rarer is), "alice" in a quarter, "zebra" in a third.
        const rows = Array.from({ length: 40 },
          (_, i) =>
            drawer(`up${String(i).padStart(2, '0')}`, `${i % 10 === 0 ? '' : 'the '}row ${i} ${i % 3 === 0 ? 'zebra' : 'ant'}${i % 4 === 0 ? ' alice' : ''}`,
              randomUnitVector(rnd, dim), { wing: i % 2 === 0 ? 'w_even' : 'w_odd' }));
        await index.upsert(rows);
        const query = nearVector(rnd, rows[3]!.embedding, 0.3);
        const choices: [string, (hits: readonly VectorHit[]) => string[], DrawerFilter | undefined][] = [
          ['fixed tokens', () => ['zebra', 'alice'], undefined],
          ['a token in most rows', () => ['the', 'zebra'], undefined],
          ['only a token in most rows', () => ['the'], { wing: 'w_odd' }],
          ['a token the hits drop', (hits) => (hits.length === 0 ? ['zebra', 'alice'] : ['zebra']), undefined],
          ['a token the hits add', (hits) => (hits.length === 0 ? ['ant'] : ['ant', 'alice']), { wing: 'w_even' }],
          ['an absent token the hits drop', (hits) => (hits.length === 0 ? ['zebra', 'absent'] : ['zebra']), undefined],
          ['no token once the hits are known', (hits) => (hits.length === 0 ? ['zebra'] : []), undefined],
          ['repeated and mixed-case tokens', () => ['Zebra', 'zebra', 'ANT', ' '], { wing: 'w_odd' }],
        ];
        for (const [name, tokensOf, filter] of choices) {
          const pool = await expectPoolOfSeparateCalls(index, query, 8, filter, tokensOf);
          expect(pool.vector, name).toHaveLength(8);
        }
        await expectPalaceError(index.candidatePool({ vector: randomUnitVector(rnd, dim + 1), k: 8, lexicalTokens: () => [] }), 'invalid_argument', /vector/);
        await expectPalaceError(index.candidatePool({ vector: query, k: 0, lexicalTokens: () => [] }), 'invalid_argument', /^k$/);
        await expectPalaceError(index.candidatePool({ vector: query, k: 8, lexicalTokens: () => [3] as never }), 'invalid_argument', /tokens/);
        await expectPalaceError(index.candidatePool({ vector: query, k: 8, filter: { wing: 3 } as never, lexicalTokens: () => [] }), 'invalid_argument',
          /filter\.wing/);
        // Rows without a stored vector (between a reset and the re-embedding that gives them one) are not candidates.
        const wide = dim * 2;
        await index.resetEmbeddings(wide);
        const fresh = randomUnitVector(rnd, wide);
        await index.replaceEmbeddings(new Map([['up03', fresh], ['up06', randomUnitVector(rnd, wide)]]));
        const pool = await expectPoolOfSeparateCalls(index, fresh, 8, undefined, () => ['zebra']);
        expect(pool.vector.map((h) => h.drawer.id)).toEqual(['up03', 'up06']);
        expect(pool.lexical.map((h) => h.drawer.id).sort()).toEqual(['up03', 'up06']);
      });

      it('pages logical drawers by logical id, with every row of each group and a total of groups', async () => {
        const rnd = seededRandom(8);
        // 25 rows: singles p00..p24 except that every fifth row is a chunk of a logical drawer.
        const rows = Array.from({ length: 25 }, (_, i) => {
          const id = `p${String((i * 7) % 25).padStart(2, '0')}`;
          const parent = i % 5 === 0 ? { parent_drawer_id: `g${i % 2}`, chunk_index: i } : {};
          return drawer(id, `page row ${i}`, randomUnitVector(rnd, dim), { filed_at: filedAt(i % 4), ...parent });
        });
        await index.upsert(rows);
        const logical = (d: DrawerWrite) => d.meta.parent_drawer_id ?? d.id;
        const groups = [...new Set(rows.map(logical))].sort(codePointCompare);
        const expected = [...rows].sort((a, b) =>
          codePointCompare(logical(a), logical(b)) || a.meta.chunk_index - b.meta.chunk_index || codePointCompare(a.id, b.id)
        ).map((r) => r.id);
        const seen: string[] = [];
        for (let offset = 0; offset < groups.length + 7; offset += 7) {
          const page = await index.list({}, offset, 7);
          expect(page.total).toBe(groups.length);
          expect(new Set(page.items.map((d: Drawer) => d.meta.parent_drawer_id ?? d.id)).size).toBe(Math.max(0, Math.min(7, groups.length - offset)));
          seen.push(...page.items.map((d) => d.id));
        }
        expect(seen).toEqual(expected);
        expect(await index.list({}, 100, 5)).toEqual({ items: [], total: groups.length });
        expect((await index.list({ room: 'nowhere' }, 0, 5)).total).toBe(0);
      });

      it('walks the metadata of every matching row once, in id byte order, after a cursor', async () => {
        const rnd = seededRandom(12);
        const ids = ['b', 'a', 'é-accent', 'Z', 'a_1', 'a-1', '😀', 'm', ...Array.from({ length: 13 }, (_, i) => `r${(i * 5) % 13}`)];
        const rows = ids.map((id, i) =>
          drawer(id, `walk row ${id}`, randomUnitVector(rnd, dim), { wing: i % 3 === 0 ? 'walk-b' : 'walk-a', n: i, flag: i % 2 === 0 })
        );
        await index.upsert(rows);
        const byteOrder = (list: string[]) => [...list].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
        for (const wing of ['walk-a', 'walk-b']) {
          const seen: { id: string; meta: DrawerWrite['meta'] }[] = [];
          for (let after: string | undefined;;) {
            const page = await index.scanMetadata({ wing }, after, 4);
            expect(page.length).toBeLessThanOrEqual(4);
            seen.push(...page);
            if (page.length < 4) break;
            after = page[page.length - 1]!.id;
          }
          const mine = rows.filter((r) => r.meta.wing === wing);
          expect(seen.map((r) => r.id)).toEqual(byteOrder(mine.map((r) => r.id)));
          // Metadata exactly as stored, and nothing else: no content, no vector.
          for (const r of seen) expect(r).toEqual({ id: r.id, meta: mine.find((m) => m.id === r.id)!.meta });
        }
        expect(await index.scanMetadata({ wing: 'walk-a' }, '😀', 10)).toEqual([]);
        expect(await index.scanMetadata({ wing: 'nowhere' }, undefined, 10)).toEqual([]);
        await expectPalaceError(index.scanMetadata({}, undefined, 0), 'invalid_argument', /limit/);
      });

      it('counts, and reports the taxonomy sorted by wing then room', async () => {
        const rnd = seededRandom(9);
        const places: [string, string][] = [
          ['w_b', 'r_2'],
          ['w_a', 'r_9'],
          ['w_b', 'r_1'],
          ['w_a', 'r_9'],
          ['w_a', 'r_10'],
          ['w_b', 'r_2'],
          ['w_b', 'r_2'],
        ];
        await index.upsert(places.map(([wing, room], i) => drawer(`t${i}`, `tax ${i}`, randomUnitVector(rnd, dim), { wing, room })));
        expect(await index.count()).toBe(7);
        expect(await index.count({ wing: 'w_b' })).toBe(4);
        expect(await index.taxonomy()).toEqual([
          { wing: 'w_a', room: 'r_10', count: 1 },
          { wing: 'w_a', room: 'r_9', count: 2 },
          { wing: 'w_b', room: 'r_1', count: 1 },
          { wing: 'w_b', room: 'r_2', count: 3 },
        ]);
        expect(await index.taxonomy({ wing: 'w_a' })).toEqual([
          { wing: 'w_a', room: 'r_10', count: 1 },
          { wing: 'w_a', room: 'r_9', count: 2 },
        ]);
      });

      it('pages 250 sources by cursor with no gaps or duplicates', async () => {
        const rnd = seededRandom(10);
        const rows: DrawerWrite[] = [];
        for (let s = 0; s < 250; s++) {
          const wing = s % 2 === 0 ? 'src_even' : 'src_odd';
          for (let c = 0; c <= s % 3; c++)
            rows.push(
              drawer(`s${s}_${c}`, `source ${s} chunk ${c}`, randomUnitVector(rnd, dim), { wing, source_file: `/repo/dir_${s % 9}/file_${s}.md`,
                chunk_index: c }),
            );
        }
        for (let i = 0; i < rows.length; i += 200) await index.upsert(rows.slice(i, i + 200));
        const expected = new Map<string, number>();
        for (const r of rows) expected.set(`${r.meta.wing}\u0000${r.meta.source_file}`, (expected.get(`${r.meta.wing}\u0000${r.meta.source_file}`) ?? 0) + 1);
        const { items, pages } = await allPages((after) => index.sources({}, after, 40));
        expect(pages).toBe(7);
        const keys = items.map((r) => `${r.wing}\u0000${r.source_file}`);
        expect(keys).toEqual([...expected.keys()].sort(codePointCompare));
        for (const r of items) expect(r.drawers).toBe(expected.get(`${r.wing}\u0000${r.source_file}`));
        const odd = await allPages((after) => index.sources({ wing: 'src_odd' }, after, 50));
        expect(odd.items).toHaveLength(125);
        expect(odd.items.every((r) => r.wing === 'src_odd')).toBe(true);
        const exact = await index.sources({}, undefined, 250);
        expect(exact.items).toHaveLength(250);
        expect(exact.next).toBeUndefined();
      });

      it('replaces one file atomically and idempotently', async () => {
        const rnd = seededRandom(11);
        const file = '/proj/doc.md';
        const version = (n: number, tag: string): DrawerWrite[] =>
          Array.from({ length: n }, (_, i) =>
            drawer(`doc_${i}`, `${tag} chunk ${i}`, randomUnitVector(rnd, dim), { wing: 'proj', source_file: file, chunk_index: i }));
        const other = drawer('other_0', 'other file', randomUnitVector(rnd, dim), { wing: 'proj', source_file: '/proj/other.md' });
        const sameFileOtherWing = drawer('elsewhere_0', 'same path, other wing', randomUnitVector(rnd, dim), { wing: 'proj2', source_file: file });
        await index.upsert([other, sameFileOtherWing]);
        await index.replaceFile('proj', file, version(5, 'first'), state('proj', file, 5));
        expect(await index.count({ sourceFile: file, wing: 'proj' })).toBe(5);
        const second = version(3, 'second');
        await index.replaceFile('proj', file, second, state('proj', file, 3, { commit: 'abc123', normalize_version: 2 }));
        await index.replaceFile('proj', file, second, state('proj', file, 3, { commit: 'abc123', normalize_version: 2 }));
        const page = await index.list({ wing: 'proj', sourceFile: file }, 0, 10);
        expect(page.items.map((d) => d.id).sort()).toEqual(['doc_0', 'doc_1', 'doc_2']);
        expect(page.items.every((d) => d.content.startsWith('second'))).toBe(true);
        expect(await index.get(['doc_3', 'doc_4'])).toEqual([]);
        expect((await index.knn(second[1]!.embedding, 1))[0]!.drawer.id).toBe('doc_1');
        expect(await index.count()).toBe(5);
        expect((await index.get(['other_0', 'elsewhere_0'])).map((d) => d.id)).toEqual(['other_0', 'elsewhere_0']);
        const states = await index.fileStates('proj', [file]);
        expect(states.get(file)).toEqual(state('proj', file, 3, { commit: 'abc123', normalize_version: 2 }));
        await index.replaceFile('proj', file, [], state('proj', file, 0));
        expect(await index.count({ sourceFile: file, wing: 'proj' })).toBe(0);
        await expectPalaceError(
          index.replaceFile('proj', file, [drawer('x', 'x', randomUnitVector(rnd, dim), { wing: 'proj', source_file: '/else' })], state('proj', file, 1)),
          'invalid_argument',
          /source_file/,
        );
      });

      it('replaces a batch of files like one replaceFile each, and refuses a bad batch whole', async () => {
        const rnd = seededRandom(13);
        const rows = (file: string, n: number, tag: string): DrawerWrite[] =>
          Array.from({ length: n }, (_, i) =>
            drawer(`${tag}_${file.slice(-4, -3)}_${i}`, `${tag} ${i}`, randomUnitVector(rnd, dim), { wing: 'batch', source_file: file, chunk_index: i }));
        const files = ['/b/a.md', '/b/b.md', '/b/c.md'];
        const untouched = drawer('keep_0', 'another file', randomUnitVector(rnd, dim), { wing: 'batch', source_file: '/b/keep.md' });
        await index.upsert([untouched]);
        await index.replaceFiles('batch', files.map((f) => ({ sourceFile: f, drawers: rows(f, 4, 'v1'), state: state('batch', f, 4) })));
        expect(await index.count({ wing: 'batch' })).toBe(13);
        // Second batch: a shrinks and changes, b empties, c is rewritten unchanged.
        const second = [
          { sourceFile: '/b/a.md', drawers: rows('/b/a.md', 2, 'v2'), state: state('batch', '/b/a.md', 2, { commit: 'c2' }) },
          { sourceFile: '/b/b.md', drawers: [], state: state('batch', '/b/b.md', 0) },
          { sourceFile: '/b/c.md', drawers: rows('/b/c.md', 4, 'v1'), state: state('batch', '/b/c.md', 4) },
        ];
        await index.replaceFiles('batch', second);
        await index.replaceFiles('batch', second);
        const ids = (await index.list({ wing: 'batch' }, 0, 100)).items.map((d) => d.id).sort();
        expect(ids).toEqual(['keep_0', 'v1_c_0', 'v1_c_1', 'v1_c_2', 'v1_c_3', 'v2_a_0', 'v2_a_1']);
        expect((await index.knn(second[0]!.drawers[1]!.embedding, 1))[0]!.drawer.id).toBe('v2_a_1');
        const states = await index.fileStates('batch', files);
        expect(files.map((f) => states.get(f)?.drawer_count)).toEqual([2, 0, 4]);
        expect(states.get('/b/a.md')!.extra).toEqual({ commit: 'c2' });
        await index.replaceFiles('batch', []);
        expect(await index.count({ wing: 'batch' })).toBe(7);

        const twice = [second[0]!, { ...second[2]!, sourceFile: '/b/a.md' }];
        await expectPalaceError(index.replaceFiles('batch', twice), 'invalid_argument', /files\[1\]\.sourceFile/);
        const sameId = [second[0]!, { sourceFile: '/b/d.md',
          drawers: [drawer('v2_a_0', 'x', randomUnitVector(rnd, dim), { wing: 'batch', source_file: '/b/d.md' })], state: state('batch', '/b/d.md', 1) }];
        await expectPalaceError(index.replaceFiles('batch', sameId), 'invalid_argument', /files\[1\]\.drawers\[0\]\.id/);
        const badLast = [{ sourceFile: '/b/e.md', drawers: rows('/b/e.md', 1, 'v3'), state: state('batch', '/b/e.md', 1) }, { sourceFile: '/b/f.md',
          drawers: rows('/b/x.md', 1, 'v3'), state: state('batch', '/b/f.md', 1) }];
        await expectPalaceError(index.replaceFiles('batch', badLast), 'invalid_argument', /source_file/);
        expect(await index.count({ wing: 'batch' })).toBe(7);
        expect((await index.fileStates('batch', ['/b/e.md'])).size).toBe(0);
      });

      it('gets, lists by cursor and deletes file states', async () => {
        const rnd = seededRandom(12);
        for (const [wing, n] of [
          ['fs_b', 12],
          ['fs_a', 9],
        ] as const) {
          for (let i = 0; i < n; i++) {
            const f = `/d/f${String(i).padStart(2, '0')}.txt`;
            await index.replaceFile(wing, f, [drawer(`${wing}_${i}`, 'x', randomUnitVector(rnd, dim), { wing, source_file: f })],
              state(wing, f, 1, { skip_reason: i % 2 === 0 ? 'none' : 'binary' }));
          }
        }
        const got = await index.fileStates('fs_a', ['/d/f01.txt', '/d/f99.txt', '/d/f03.txt']);
        expect([...got.keys()].sort()).toEqual(['/d/f01.txt', '/d/f03.txt']);
        expect(got.get('/d/f01.txt')!.extra).toEqual({ skip_reason: 'binary' });
        const all = await allPages((after) => index.listFileStates(undefined, after, 5));
        expect(all.items.map((s) => `${s.wing}:${s.source_file}`)).toEqual(all.items.map((s) => `${s.wing}:${s.source_file}`).sort(codePointCompare));
        expect(all.items).toHaveLength(21);
        expect(new Set(all.items.map((s) => `${s.wing}:${s.source_file}`)).size).toBe(21);
        const onlyB = await allPages((after) => index.listFileStates('fs_b', after, 4));
        expect(onlyB.items).toHaveLength(12);
        expect(onlyB.pages).toBe(3);
        expect(await index.deleteFileStates('fs_b', ['/d/f00.txt', '/d/f01.txt', '/d/nope.txt'])).toBe(2);
        expect((await index.fileStates('fs_b', ['/d/f00.txt', '/d/f02.txt'])).size).toBe(1);
        expect(await index.count()).toBe(21);
      });

      it('returns stored embeddings by id', async () => {
        const rnd = seededRandom(13);
        const rows = Array.from({ length: 5 }, (_, i) => drawer(`e${i}`, `emb ${i}`, randomUnitVector(rnd, dim)));
        await index.upsert(rows);
        const got = await index.embeddings(['e3', 'missing', 'e0']);
        expect([...got.keys()].sort()).toEqual(['e0', 'e3']);
        expect(Array.from(got.get('e3')!)).toEqual(Array.from(rows[3]!.embedding));
      });

      it('keeps everything across close and reopen', async () => {
        const rnd = seededRandom(14);
        const rows = Array.from({ length: 40 },
          (_, i) => drawer(`r${i}`, `persist ${i} keyword${i % 3}`, randomUnitVector(rnd, dim), { wing: i % 2 ? 'p1' : 'p2' }));
        await index.upsert(rows);
        await index.replaceFile('p1', '/f', [drawer('rf', 'file row', randomUnitVector(rnd, dim), { wing: 'p1', source_file: '/f' })], state('p1', '/f', 1));
        const query = nearVector(rnd, rows[5]!.embedding);
        const before = {
          knn: await index.knn(query, 7, { wing: 'p1' }),
          lexical: (await index.lexical(['keyword1'], 50)).map((d) => d.id).sort(),
          list: await index.list({}, 0, 100),
          taxonomy: await index.taxonomy(),
          states: await index.fileStates('p1', ['/f']),
        };
        await index.close();
        index = await opened.reopen();
        expect(await index.knn(query, 7, { wing: 'p1' })).toEqual(before.knn);
        expect((await index.lexical(['keyword1'], 50)).map((d) => d.id).sort()).toEqual(before.lexical);
        expect(await index.list({}, 0, 100)).toEqual(before.list);
        expect(await index.taxonomy()).toEqual(before.taxonomy);
        expect(await index.fileStates('p1', ['/f'])).toEqual(before.states);
      });
    });

    describe('filters pushed into every query', () => {
      let rows: DrawerWrite[];
      beforeAll(async () => {
        opened = await open();
        index = opened.index;
        rows = filterCorpus(index.dimension);
        await index.upsert(rows);
      });
      afterAll(async () => {
        await opened.cleanup();
      });

      for (const c of FILTER_CASES) {
        it(`filter by ${c.name}`, async () => {
          const expected = rows.filter(c.keep).map((d) => d.id).sort();
          expect(expected.length).toBeGreaterThan(0);
          expect(expected.length).toBeLessThan(rows.length);
          expect(await index.count(c.filter)).toBe(expected.length);
          // list pages logical drawers: a group matches when any row does, and comes back whole.
          const logical = (d: { id: string; meta: DrawerWrite['meta'] }) => d.meta.parent_drawer_id ?? d.meta.parent_entry_id ?? d.id;
          const groups = new Set(rows.filter(c.keep).map(logical));
          const page = await index.list(c.filter, 0, 100);
          expect(page.total).toBe(groups.size);
          expect(page.items.map((d) => d.id).sort()).toEqual(rows.filter((d) => groups.has(logical(d))).map((d) => d.id).sort());
          const hits = await index.knn(rows[0]!.embedding, 100, c.filter);
          expect(hits.map((h) => h.drawer.id).sort()).toEqual(expected);
          const top = await index.knn(rows[1]!.embedding, 3, c.filter);
          expect(top.map((h) => h.drawer.id)).toEqual(bruteForce(rows.filter(c.keep), rows[1]!.embedding, 3).map((b) => b.id));
          expect((await index.lexical(['marker'], 100, c.filter)).map((d) => d.id).sort()).toEqual(expected);
          await expectPoolOfSeparateCalls(index, rows[1]!.embedding, 3, c.filter, () => ['even', 'marker']);
          expect((await index.lexical(['even'], 100, c.filter)).map((d) => d.id).sort()).toEqual(
            rows.filter((d) => c.keep(d) && d.content.endsWith('even')).map((d) => d.id).sort(),
          );
          const tax = await index.taxonomy(c.filter);
          expect(tax.reduce((s, t) => s + t.count, 0)).toBe(expected.length);
          const sources = await index.sources(c.filter, undefined, 100);
          expect(sources.items.reduce((s, r) => s + r.drawers, 0)).toBe(expected.length);
          const walked: { id: string; meta: DrawerWrite['meta'] }[] = [];
          for (let after: string | undefined;;) {
            const page = await index.scanMetadata(c.filter, after, 3);
            walked.push(...page);
            if (page.length < 3) break;
            after = page[page.length - 1]!.id;
          }
          expect(walked.map((r) => r.id)).toEqual([...expected].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
          for (const r of walked) expect(r).toEqual({ id: r.id, meta: rows.find((d) => d.id === r.id)!.meta });
        });
      }
    });

    describe('top-k over a large clustered corpus', () => {
      const CLUSTERS = 60;
      const ROWS = 6000;
      let rows: DrawerWrite[];
      let queries: Float32Array[];
      beforeAll(async () => {
        opened = await open();
        index = opened.index;
        const rnd = seededRandom(99);
        const centers = Array.from({ length: CLUSTERS }, () => randomUnitVector(rnd, index.dimension));
        rows = Array.from({ length: ROWS }, (_, i) =>
          drawer(`big${i}`, `big row ${i}`, nearVector(rnd, centers[i % CLUSTERS]!), {
            wing: i % 20 === 0 ? 'rare' : 'common',
            room: `room_${i % 50}`,
            filed_at: filedAt(i),
          }));
        for (let i = 0; i < ROWS; i += 500) await index.upsert(rows.slice(i, i + 500));
        queries = Array.from({ length: 12 }, (_, q) => nearVector(rnd, centers[(q * 7) % CLUSTERS]!));
      }, 600_000);
      afterAll(async () => {
        await opened.cleanup();
      });

      const cases: { name: string; filter?: DrawerFilter; keep: (d: DrawerWrite) => boolean }[] = [
        { name: 'no filter', keep: () => true },
        { name: 'an unselective filter (95% of rows)', filter: { wing: 'common' }, keep: (d) => d.meta.wing === 'common' },
        { name: 'a selective filter (2% of rows)', filter: { room: 'room_7' }, keep: (d) => d.meta.room === 'room_7' },
        { name: 'a very selective combined filter (2.5% of rows)', filter: { wing: 'rare', since: filedAt(3000) },
          keep: (d) => d.meta.wing === 'rare' && d.meta.filed_at >= filedAt(3000) },
      ];
      for (const c of cases) {
        it(`matches brute force under ${c.name}`, async () => {
          const pool = rows.filter(c.keep);
          let found = 0;
          let wanted = 0;
          for (const q of queries) {
            const hits = await index.knn(q, 10, c.filter);
            const truth = bruteForce(pool, q, 10);
            expect(hits).toHaveLength(Math.min(10, pool.length));
            expect(hits[0]!.drawer.id).toBe(truth[0]!.id);
            for (const h of hits) {
              expect(c.keep(rows[Number(h.drawer.id.slice(3))]!)).toBe(true);
              expect(h.distance).toBeCloseTo(1 - dot(rows[Number(h.drawer.id.slice(3))]!.embedding, q), 5);
            }
            for (let i = 1; i < hits.length; i++) expect(hits[i]!.distance).toBeGreaterThanOrEqual(hits[i - 1]!.distance);
            const truthIds = new Set(truth.map((t) => t.id));
            found += hits.filter((h) => truthIds.has(h.drawer.id)).length;
            wanted += truth.length;
          }
          expect(found / wanted).toBeGreaterThanOrEqual(0.95);
        });
      }

      it('gives the union pool of the separate calls, exact for a selective filter, on the same lexical rows under any', async () => {
        for (const [q, vector] of queries.slice(0, 4).entries()) {
          const rare = String(107 + 50 * q);
          await expectPoolOfSeparateCalls(index, vector, 10, { room: 'room_7' }, (hits) => ['row', rare, ...hits.slice(0, 1).map((h) => h.drawer.id.slice(3))]);
          for (const c of cases) {
            const pool = await index.candidatePool({ vector, k: 10, filter: c.filter, lexicalTokens: () => ['row', rare] });
            expect(pool.vector[0]!.drawer.id).toBe(bruteForce(rows.filter(c.keep), vector, 1)[0]!.id);
            expect(pool.lexical.map((h) => h.drawer.id)).toEqual((await index.lexical(['row', rare], 10, c.filter)).map((d) => d.id));
            expect(pool.inScope).toBe(await index.count(c.filter));
          }
        }
      });
    });
  });
}
