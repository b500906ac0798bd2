/**
 * The GraphStore contract against Neo4j (cluster profile), plus what only this adapter has to
 * get right: the embedded adapter's code-point order for text outside the BMP (Cypher's own
 * ORDER BY may compare UTF-16 units), serialised concurrent writes, and palace isolation in the
 * shared database. Each store runs under a throwaway palace name whose nodes are deleted after.
 * No skip when Neo4j is down: opening fails with store_unavailable and every test fails.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import { openSqliteGraphStore } from '../../stores/embedded/sqlite-graph-store.js';
import { compareCodePoints } from '../../core/scan.js';
import { openNeo4jGraphStore, type Neo4jGraphStore } from '../../stores/neo4j/neo4j-graph-store.js';
import { codePointSortKey } from '../../stores/neo4j/sort-key.js';
import type { GraphStore, HallwayWrite, KgTripleWrite, TunnelWrite } from '../../stores/ports/graph-store.js';
import { makeTempDir, removeDir } from '../helpers/tmp.js';
import { describeGraphStoreContract } from './graph-store.contract.js';
import { kgFact } from '../helpers/kg.js';

const palaceName = () => `contract-graph-${randomBytes(6).toString('hex')}`;
const openNeo4j = (palace = palaceName()) => openNeo4jGraphStore({ neo4j: loadConfig().neo4j, palaceName: palace });

async function dropAndClose(graph: Neo4jGraphStore): Promise<void> {
  try {
    await graph.dropPalace();
  } finally {
    await graph.close();
  }
}

describeGraphStoreContract('cluster (Neo4j)', async () => {
  const graph = await openNeo4j();
  return { graph, cleanup: () => dropAndClose(graph) };
});

// Characters on both sides of the UTF-16 / code-point disagreement: U+E000..U+FFFF sort before
// astral characters by code point but after them by UTF-16 unit.
const PRIVATE_USE = '\ue000';
const REPLACEMENT = '\ufffd';
const ASTRAL = '😀';
const ASTRAL_LOW = '\u{10000}';
const HANGUL_LAST = '\ud7a3';
const names = ['a', `a${ASTRAL}`, `a${REPLACEMENT}`, `a${PRIVATE_USE}`, ASTRAL, ASTRAL_LOW, REPLACEMENT, PRIVATE_USE, HANGUL_LAST, `${REPLACEMENT}x`,
  `${ASTRAL}x`, 'z', '\ud7ff', `\ud7ff${ASTRAL}`];

function fact(s: string, p: string, o: string, recorded: string, from: string | null, id: string): KgTripleWrite {
  return kgFact({ id, subject: { id: s, name: s }, predicate: p, object: { id: o, name: o }, valid_from: from, from_key: from, recorded_at: recorded,
    created_by: s === 'hub' ? 'alice' : null });
}

/** The same writes on both adapters, for comparing everything they return. */
async function writeAstralData(g: GraphStore): Promise<void> {
  // All facts share recorded_at so their order comes from the ids, and two share from_key.
  for (const [i, n] of names.entries()) {
    await g.kgAdd(fact('hub', `pred${n}`, `obj${n}`, '2030-01-01T00:00:00.000000Z', i % 2 === 0 ? '2024-01-01T00:00:00Z' : null, `t_${n}`));
    await g.kgAdd(fact(`sub${n}`, 'links', 'hub', '2030-01-01T00:00:00.000000Z', null, `u_${n}`));
  }
  const tunnels: TunnelWrite[] = names.map((n) => ({
    id: `tn${n}`,
    source: { wing: `w${n}`, room: 'r' },
    target: { wing: 'other', room: n },
    label: n,
    kind: 'explicit',
    source_wing_key: `w${n}`,
    target_wing_key: 'other',
    at: '2030-01-01T00:00:00.000000+00:00',
    by: n === 'z' ? null : `agent${n}`,
  }));
  await g.tunnelUpsert(tunnels);
  for (const n of names) {
    const hallways: HallwayWrite[] = names.map((m) => ({
      id: `h${n}|${m}`,
      wing: `w${n}`,
      entity_a: m,
      entity_b: `${m}${n}`,
      co_occurrence_count: 2,
      rooms: [n, m],
      label: `${m} ↔ ${n}`,
      created_at: '2030-01-01T00:00:00+00:00',
      created_by: 'auto',
    }));
    await g.hallwaysReplaceWing(`w${n}`, hallways);
  }
}

async function readAll(g: GraphStore) {
  return {
    facts: await g.kgFacts({ entity_id: 'hub', direction: 'both' }),
    timeline: await g.kgTimeline({ limit: 100 }),
    timelineHead: await g.kgTimeline({ limit: 5 }),
    hubTimelineHead: await g.kgTimeline({ entity_id: 'hub', limit: 7 }),
    stats: await g.kgStats(),
    tunnels: await g.tunnelList(),
    hallways: await g.hallwayList(),
  };
}

describe('Neo4j GraphStore specifics', () => {
  let graph: Neo4jGraphStore;
  beforeEach(async () => {
    graph = await openNeo4j();
  });
  afterEach(async () => {
    await dropAndClose(graph);
  });

  it('orders text outside the BMP exactly like the embedded adapter (code points), including under LIMIT', async () => {
    const dir = makeTempDir('mempalace-graph-astral-');
    const embedded = await openSqliteGraphStore(dir);
    try {
      await writeAstralData(embedded);
      await writeAstralData(graph);
      const expected = await readAll(embedded);
      const actual = await readAll(graph);
      expect(actual).toEqual(expected);
      // The data really exercises the disagreement: UTF-16 order would differ from what we got.
      const ids = actual.facts.filter((f) => f.direction === 'outgoing').map((f) => f.id);
      expect([...ids].sort()).not.toEqual(ids);
      expect(actual.stats.relationship_types).toContain(`pred${ASTRAL}`);
    } finally {
      await embedded.close();
      removeDir(dir);
    }
  });

  it('serialises concurrent kgAdd of one open fact into one triple', async () => {
    const writes = Array.from({ length: 20 }, (_, i) => fact('a', 'p', 'b', `2030-01-01T00:00:00.${String(i + 1).padStart(6, '0')}Z`, null, `t_${i}`));
    const results = await Promise.all(writes.map((w) => graph.kgAdd(w)));
    expect(results.filter((r) => r.inserted)).toHaveLength(1);
    expect(new Set(results.map((r) => r.triple_id)).size).toBe(1);
    expect(await graph.kgStats()).toMatchObject({ entities: 2, triples: 1 });
  });

  it('serialises concurrent replacements of one wing from two store instances (two processes)', async () => {
    const second = await openNeo4j(graph.palace);
    const hw = (i: number): HallwayWrite => ({ id: `h${i}`, wing: 'w', entity_a: `A${i}`, entity_b: `B${i}`, co_occurrence_count: i, rooms: [], label: '',
      created_at: '2030-01-01T00:00:00+00:00', created_by: 'auto' });
    try {
      await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? graph : second).hallwaysReplaceWing('w', [hw(i), hw(i + 100)])));
    } finally {
      await second.close();
    }
    const left = await graph.hallwayList('w');
    expect(left).toHaveLength(2);
    // Both records come from the same call: counts i and i + 100.
    const counts = left.map((h) => h.co_occurrence_count).sort((a, b) => a - b);
    expect(counts[1]! - counts[0]!).toBe(100);
    expect(left[0]!.rooms).toEqual([]);
  });

  it('keeps palaces apart in the shared database and drops only its own', async () => {
    const other = await openNeo4j();
    try {
      await graph.kgAdd(fact('a', 'p', 'b', '2030-01-01T00:00:00.000001Z', null, 't1'));
      await other.kgAdd(fact('a', 'p', 'b', '2030-01-01T00:00:00.000002Z', null, 't1'));
      await other.kgAdd(fact('a', 'q', 'c', '2030-01-01T00:00:00.000003Z', null, 't2'));
      await graph.tunnelUpsert([{ id: 'same', source: { wing: 'a', room: 'r' }, target: { wing: 'b', room: 'r' }, label: 'mine', kind: 'explicit',
        source_wing_key: 'a', target_wing_key: 'b', at: '2030-01-01T00:00:00.000000+00:00', by: null }]);
      await other.tunnelUpsert([{ id: 'same', source: { wing: 'a', room: 'r' }, target: { wing: 'b', room: 'r' }, label: 'theirs', kind: 'explicit',
        source_wing_key: 'a', target_wing_key: 'b', at: '2030-01-01T00:00:00.000000+00:00', by: null }]);
      expect(await graph.kgStats()).toEqual({ entities: 2, triples: 1, current_facts: 1, relationship_types: ['p'] });
      expect((await other.kgFacts({ entity_id: 'a', direction: 'outgoing' })).map((f) => f.id)).toEqual(['t1', 't2']);
      expect((await graph.tunnelList()).map((t) => t.label)).toEqual(['mine']);
      expect(await other.dropPalace()).toBe(4);
      expect(await graph.tunnelCount()).toBe(1);
      expect((await graph.kgStats()).triples).toBe(1);
    } finally {
      await other.close();
    }
  });

  it('rejects a palace name that cannot namespace keys, naming the field and rule', async () => {
    await expect(openNeo4j('')).rejects.toMatchObject({ code: 'invalid_argument', field: 'palace_name', rule: 'neo4j_palace_name' });
    await expect(openNeo4j('a\u0000b')).rejects.toMatchObject({ code: 'invalid_argument', field: 'palace_name' });
  });
});

describe('codePointSortKey', () => {
  it('orders keys by UTF-16 unit exactly as their texts order by code point', () => {
    // Characters around every boundary the key cares about, in random strings of 0–4 of them.
    const alphabet = ['a', 'z', '\u0001', '\u0002', '\ud7fe', '\ud7ff', '\ue000', '\ue001', '\uf8ff', '\ufffd', '\uffff', '\u{10000}', '\u{1f600}',
      '\u{10ffff}'];
    let state = 12345;
    const next = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const texts = Array.from({ length: 400 },
      () => Array.from({ length: Math.floor(next() * 5) }, () => alphabet[Math.floor(next() * alphabet.length)]).join(''));
    const utf16 = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    let disagreements = 0;
    for (const a of texts) {
      for (const b of texts) {
        const want = Math.sign(compareCodePoints(a, b));
        expect(utf16(codePointSortKey(a), codePointSortKey(b))).toBe(want);
        if (utf16(a, b) !== want) disagreements++;
      }
    }
    // The sample does contain pairs where raw UTF-16 order is wrong.
    expect(disagreements).toBeGreaterThan(0);
  });
});

describe('Neo4j GraphStore when the server cannot be reached', () => {
  it('fails to open with a retryable store_unavailable error naming neo4j', async () => {
    const err = await openNeo4jGraphStore({ neo4j: { ...loadConfig().neo4j, uri: 'bolt://127.0.0.1:1' }, palaceName: palaceName() }).then(() => null,
      (e: unknown) => e);
    expect(err).toMatchObject({ code: 'store_unavailable', store: 'neo4j', retryable: true });
    expect((err as Error).message).toMatch(/^neo4j is unavailable: /);
  });
});
