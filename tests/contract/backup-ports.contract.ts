/**
 * The port methods backup, restore and migration rely on, written once and run against every
 * adapter: full scans with cursors (drawer rows with vectors, KG triples, artifacts), verbatim
 * restores (file states, triples, tunnels, hallways) and verbatim imports of events and
 * artifacts made elsewhere (docs/logstream.md §8.4). Each test gets fresh, empty stores.
 */
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DrawerStore } from '../../stores/ports/palace-stores.js';
import type { LogstreamStore } from '../../stores/ports/palace-stores.js';
import type { RemoteEvent } from '../../stores/ports/logstream/records.js';
import type { GraphStore, HallwayRecord, KgTriple, TunnelRestore } from '../../stores/ports/graph-store.js';
import { rejectionOf } from '../helpers/errors.js';
import { drawer, randomUnitVector, seededRandom } from './drawer-index.fixtures.js';

export interface OpenedBackupStores {
  drawers: DrawerStore;
  graph: GraphStore;
  logstream: LogstreamStore;
  cleanup(): Promise<void>;
}

const FOREIGN = `rep_${'ab'.repeat(16)}`;
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

function triple(n: number, s: string, o: string, closed = false): KgTriple {
  return {
    id: `t_${String(n).padStart(4, '0')}`,
    subject_id: s.toLowerCase(),
    subject_name: s,
    predicate: 'knows',
    object_id: o.toLowerCase(),
    object_name: o,
    valid_from: '2025-01-01',
    valid_to: closed ? '2025-02-01' : null,
    from_key: '2025-01-01T00:00:00Z',
    to_key: closed ? '2025-02-01T00:00:00Z' : null,
    confidence: 0.5,
    source_closet: null,
    source_file: n % 2 ? '/notes.md' : null,
    source_drawer_id: null,
    adapter_name: null,
    // Two triples share an instant so the id breaks the tie.
    recorded_at: `2030-01-01T00:00:00.${String(Math.floor(n / 2)).padStart(6, '0')}Z`,
    // Who added and ended it travels verbatim; some were added outside a face.
    created_by: n % 3 === 0 ? null : 'alice',
    updated_by: closed ? 'bob' : null,
    updated_at: closed ? '2030-02-01T00:00:00.000000Z' : null,
  };
}

function foreignEvent(n: number, hlcMs: number, artifactIds: string[] = []): RemoteEvent {
  return {
    id: `evt_20250101T000000_${String(n).padStart(12, '0')}`,
    origin_replica: FOREIGN,
    origin_seq: n,
    hlc: `${String(hlcMs).padStart(13, '0')}-${n.toString(16).padStart(6, '0')}-${FOREIGN}`,
    type: 'note',
    stream: 'ops/imported',
    room: 'general',
    topic: null,
    from_agent: 'elsewhere',
    to_agent: '*',
    correlation_id: null,
    branch: null,
    base_commit: null,
    status: null,
    artifact_ids: artifactIds,
    body: `imported ${n}`,
    created_at: '2025-01-01T00:00:00Z',
    metadata_json: `{"n": ${n}}`,
  };
}

export function describeBackupPortsContract(adapterName: string, open: () => Promise<OpenedBackupStores>): void {
  describe(`backup ports contract: ${adapterName}`, () => {
    let s: OpenedBackupStores;
    beforeEach(async () => {
      s = await open();
    });
    afterEach(async () => {
      await s.cleanup();
    });

    it('scanRows walks every row once in id byte order, with its exact vector and metadata', async () => {
      const rnd = seededRandom(3);
      const ids = ['b', 'a', 'é-accent', 'Z', 'a_1', 'a-1', '😀', 'm', ...Array.from({ length: 17 }, (_, i) => `r${(i * 7) % 17}`)];
      const rows = ids.map((id, i) => drawer(id, `row ${id}`, randomUnitVector(rnd, s.drawers.dimension), { wing: i % 2 ? 'w1' : 'w2', flag: i % 3 === 0 }));
      await s.drawers.upsert(rows);
      const seen = [];
      for (let after: string | undefined;;) {
        const page = await s.drawers.scanRows(after, 7);
        seen.push(...page);
        if (page.length < 7) break;
        after = page[page.length - 1]!.id;
      }
      const byteOrder = [...ids].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
      expect(seen.map((r) => r.id)).toEqual(byteOrder);
      for (const r of seen) {
        const original = rows.find((o) => o.id === r.id)!;
        expect(r.embedding).toEqual(original.embedding);
        expect(r.meta).toEqual(original.meta);
        expect(r.content).toBe(original.content);
      }
    });

    it('putFileStates stores and replaces states and leaves drawers alone', async () => {
      const rnd = seededRandom(4);
      await s.drawers.upsert([drawer('f1', 'from f', randomUnitVector(rnd, s.drawers.dimension), { wing: 'w', source_file: '/f.md' })]);
      const state = { wing: 'w', source_file: '/f.md', size: 3, mtime_ms: 1.25, content_sha256: 'cd'.repeat(32), drawer_count: 1,
        mined_at: '2026-01-01T00:00:00.000000Z', extra: { commit: 'abc', n: 1, ok: false } };
      const { extra: _extra, ...plain } = state;
      await s.drawers.putFileStates([state, { ...plain, source_file: '/g.md' }]);
      await s.drawers.putFileStates([{ ...state, size: 4 }]);
      const got = await s.drawers.fileStates('w', ['/f.md', '/g.md']);
      expect(got.get('/f.md')).toEqual({ ...state, size: 4 });
      expect(got.get('/g.md')).not.toHaveProperty('extra');
      expect(await s.drawers.count()).toBe(1);
    });

    it('kgRestore stores triples verbatim once; kgScan pages them in (recorded_at, id) order', async () => {
      const triples = [triple(3, 'Ann', 'Bob'), triple(0, 'Ann', 'Cy'), triple(1, 'Bob', 'Cy', true), triple(2, 'Cy', 'Ann'), triple(4, 'ann', 'Dee')];
      expect(await s.graph.kgRestore(triples)).toBe(5);
      expect(await s.graph.kgRestore(triples.slice(0, 2))).toBe(0);
      const scanned: KgTriple[] = [];
      for (let after: { recorded_at: string; id: string } | undefined;;) {
        const page = await s.graph.kgScan(after, 2);
        scanned.push(...page);
        if (page.length < 2) break;
        after = { recorded_at: page[1]!.recorded_at, id: page[1]!.id };
      }
      // The entity `ann` keeps the spelling it was first restored with.
      const expected = [...triples].sort((a, b) => (a.recorded_at < b.recorded_at ? -1 : a.recorded_at > b.recorded_at ? 1 : a.id < b.id ? -1 : 1)).map((
        t,
      ) => (t.subject_id === 'ann' ? { ...t, subject_name: 'Ann' } : t));
      expect(scanned).toEqual(expected);
      expect(await s.graph.kgStats()).toMatchObject({ entities: 4, triples: 5, current_facts: 4 });
    });

    it('tunnelRestore and hallwayRestore keep timestamps and dynamics verbatim, replacing by id', async () => {
      const tunnels: TunnelRestore[] = [
        { id: 'tn1', source: { wing: 'Alpha', room: 'r1' }, target: { wing: 'beta', room: 'r2', drawer_id: 'd9' }, label: 'l', kind: 'explicit',
          created_at: '2025-01-01T00:00:00Z', updated_at: '2025-02-01T00:00:00Z', strength: 0.25, stability: 2.5, last_activated: '2025-03-01T00:00:00Z',
          access_count: 7, source_wing_key: 'alpha', target_wing_key: 'beta' },
        { id: 'tn2', source: { wing: 'beta', room: 'r2' }, target: { wing: 'gamma', room: 'r3' }, label: '', kind: 'topic', created_at: '2025-01-02T00:00:00Z',
          strength: 1, stability: 1, last_activated: '2025-01-02T00:00:00Z', access_count: 0, source_wing_key: 'beta', target_wing_key: 'gamma' },
      ];
      await s.graph.tunnelRestore(tunnels);
      await s.graph.tunnelRestore([tunnels[1]!]);
      const strip = ({ source_wing_key: _a, target_wing_key: _b, ...t }: TunnelRestore) => t;
      expect(await s.graph.tunnelList()).toEqual(tunnels.map(strip));
      expect(await s.graph.tunnelList({ wing_key: 'alpha' })).toEqual([strip(tunnels[0]!)]);
      const hallways: HallwayRecord[] = [
        { id: 'h1', wing: 'w', entity_a: 'a', entity_b: 'b', co_occurrence_count: 3, rooms: ['r1', 'r2'], label: 'a ↔ b', created_at: '2025-01-01T00:00:00Z',
          created_by: 'auto', strength: 0.5, stability: 3, last_activated: '2025-04-01T00:00:00Z', access_count: 2 },
        { id: 'h2', wing: 'w', entity_a: 'a', entity_b: 'c', co_occurrence_count: 1, rooms: [], label: '', created_at: '2025-01-01T00:00:00Z',
          created_by: 'auto', strength: 1, stability: 1, last_activated: '2025-01-01T00:00:00Z', access_count: 0 },
      ];
      await s.graph.hallwayRestore(hallways);
      await s.graph.hallwayRestore([{ ...hallways[1]!, access_count: 5 }]);
      expect(await s.graph.hallwayList('w')).toEqual([hallways[0], { ...hallways[1], access_count: 5 }]);
    });

    it('scanArtifacts walks every artifact, one applied verbatim among them', async () => {
      for (const text of ['one', 'two', 'three']) {
        await s.logstream.putArtifact({ kind: 'note', content: text, sha256: sha256(text), size_bytes: text.length, created_by: 'me', metadata_json: '{}' });
      }
      const content = 'imported content ✓';
      const foreign = { id: 'art_20250101T000000_aaaaaaaaaaaa', kind: 'diff', content, sha256: sha256(content), size_bytes: Buffer.byteLength(content),
        created_by: 'elsewhere', created_at: '2025-01-01T00:00:00Z', origin_replica: FOREIGN, metadata_json: '{"k": [1, 2]}' };
      expect(await s.logstream.applyRemoteArtifact(foreign)).toBe(true);
      expect(await s.logstream.applyRemoteArtifact(foreign)).toBe(false);
      expect(await s.logstream.getArtifact(foreign.id)).toEqual({
        id: foreign.id,
        kind: 'diff',
        sha256: foreign.sha256,
        size_bytes: Buffer.byteLength(content),
        content,
        created_by: 'elsewhere',
        created_at: foreign.created_at,
        origin_replica: FOREIGN,
        metadata: { k: [1, 2] },
      });
      const ids = new Set<string>();
      for (let cursor: string | undefined;;) {
        const page = await s.logstream.scanArtifacts(cursor, 2);
        for (const a of page.items) {
          ids.add(a.id);
          expect(a.content.length).toBeGreaterThan(0);
        }
        if (page.next === undefined) break;
        cursor = page.next;
      }
      expect(ids.size).toBe(4);
      expect(ids.has(foreign.id)).toBe(true);
    });

    it('applyRemoteEvent, as import uses it, stores events verbatim under new seqs, skips held ones, refuses unknown artifacts and advances the clock', async () => {
      const applyAll = async (events: RemoteEvent[]): Promise<number> => {
        let applied = 0;
        for (const e of events) if (await s.logstream.applyRemoteEvent(e, { reclaimOwn: true }) === 'applied') applied++;
        return applied;
      };
      const local = await s.logstream.append({ ...foreignEvent(0, 0), metadata_json: '{}' });
      const content = 'cited';
      await s.logstream.applyRemoteArtifact({ id: 'art_20250101T000000_bbbbbbbbbbbb', kind: 'note', content, sha256: sha256(content),
        size_bytes: Buffer.byteLength(content), created_by: 'x', created_at: '2025-01-01T00:00:00Z', origin_replica: FOREIGN, metadata_json: '{}' });
      const ahead = Date.now() + 30_000;
      const events = [foreignEvent(1, ahead - 2), foreignEvent(2, ahead - 1, ['art_20250101T000000_bbbbbbbbbbbb']), foreignEvent(3, ahead)];
      expect(await applyAll(events)).toBe(3);
      expect(await applyAll(events)).toBe(0);
      expect(await applyAll([{ ...events[0]!, id: 'evt_20250101T000000_ffffffffffff' }])).toBe(0);
      const listed = await s.logstream.list({ order: 'asc', stream: 'ops/imported', limit: 10 });
      expect(listed.map((e) => e.id)).toEqual([local.id, ...events.map((e) => e.id)]);
      expect(listed.map((e) => e.seq)).toEqual([...listed.map((e) => e.seq)].sort((a, b) => a - b));
      expect(listed[0]!.seq).toBe(local.seq);
      for (const [i, e] of events.entries()) {
        const { metadata_json: _m, ...rest } = e;
        expect(listed[i + 1]).toEqual({ ...rest, seq: listed[i + 1]!.seq, metadata: { n: i + 1 } });
      }
      expect(await s.logstream.getEvent(events[1]!.id)).toMatchObject({ artifact_ids: ['art_20250101T000000_bbbbbbbbbbbb'] });
      expect(await s.logstream.versionVector()).toMatchObject({ [FOREIGN]: 3 });
      const refused = await rejectionOf(applyAll([foreignEvent(4, ahead, ['art_20250101T000000_cccccccccccc'])]));
      expect(refused).toMatchObject({ code: 'not_found', rule: 'known_artifact', details: { artifact_id: 'art_20250101T000000_cccccccccccc' } });
      expect(await s.logstream.getEvent(foreignEvent(4, ahead).id)).toBeNull();
      const after = await s.logstream.append({ ...foreignEvent(0, 0), metadata_json: '{}' });
      expect(after.hlc > events[2]!.hlc.replace(FOREIGN, '')).toBe(true);
      expect(after.seq).toBeGreaterThan(listed.at(-1)!.seq);
    });
  });
}
