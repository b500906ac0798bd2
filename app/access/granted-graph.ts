/**
 * The graph store as a caller with wing grants sees it.
 *
 * - Tunnels join two wing/room endpoints: one is visible when both wings are readable, and
 *   creating or deleting one needs read on both wings and write on at least one.
 * - Hallways belong to one wing: read and write follow that wing.
 * - Facts name entities, not wings. A fact drawn from a drawer (`source_drawer_id`) belongs to
 *   that drawer's wing; any other fact (or one whose drawer is gone) is shared by the palace,
 *   readable by every caller and writable with the `write` scope. Closing facts
 *   (invalidate, supersede) needs write on the wing of every open fact it would close.
 * - Counts (kg_stats, tunnel count) count visible records only.
 */
import type { GraphStore, HallwayRecord, KgStatsRow, KgTriple, TunnelEndpoint, TunnelFilter, TunnelRestore,
  TunnelWrite } from '../../stores/ports/graph-store.js';
import type { WingView } from './wing-view.js';
import { withOverrides } from './with-overrides.js';

const SCAN_PAGE = 1000;

export function grantedGraph(inner: GraphStore, view: WingView): GraphStore {
  /** The wing of each fact's source drawer, where it has one that is stored. */
  const factWings = async (facts: readonly { source_drawer_id: string | null }[]) =>
    view.wingsOf([...new Set(facts.map((f) => f.source_drawer_id).filter((id): id is string => id !== null))]);
  const visibleFacts = async <T extends KgTriple>(facts: T[]): Promise<T[]> => {
    const wings = await factWings(facts);
    return facts.filter((f) => f.source_drawer_id === null || !wings.has(f.source_drawer_id) || view.readable(wings.get(f.source_drawer_id)!));
  };
  const assertFactsWritable = async (facts: readonly { source_drawer_id: string | null }[], what: string) => {
    for (const wing of (await factWings(facts)).values()) view.assertWritable(wing, what);
  };
  /** Open facts (subject, predicate, object) that a close would end. */
  const openFacts = async (subjectId: string, predicate: string, objectId: string) =>
    (await inner.kgFacts({ entity_id: subjectId, direction: 'outgoing' })).filter((f) =>
      f.predicate === predicate && f.object_id === objectId && f.to_key === null
    );

  const tunnelVisible = (t: { source: TunnelEndpoint; target: TunnelEndpoint }) => view.readable(t.source.wing) && view.readable(t.target.wing);
  const assertTunnelWritable = (t: { source: TunnelEndpoint; target: TunnelEndpoint }, what: string) => {
    if (!tunnelVisible(t)) view.assertWritable(view.readable(t.source.wing) ? t.target.wing : t.source.wing, what);
    if (!view.writable(t.source.wing) && !view.writable(t.target.wing)) view.assertWritable(t.source.wing, what);
  };
  const visibleTunnels = async (filter?: TunnelFilter) => (await inner.tunnelList(filter)).filter(tunnelVisible);

  const overrides: Partial<GraphStore> = {
    async kgAdd(triple) {
      await assertFactsWritable([triple], 'add a fact drawn from its drawer');
      return inner.kgAdd(triple);
    },
    async kgInvalidate(q) {
      await assertFactsWritable(await openFacts(q.subject_id, q.predicate, q.object_id), 'invalidate facts');
      return inner.kgInvalidate(q);
    },
    async kgSupersede(q) {
      const s = q.successor;
      await assertFactsWritable([s, ...await openFacts(s.subject.id, s.predicate, q.old_object.id)], 'supersede facts');
      return inner.kgSupersede(q);
    },
    async kgFacts(q) {
      return visibleFacts(await inner.kgFacts(q));
    },
    async kgTimeline(q) {
      return visibleFacts(await inner.kgTimeline(q));
    },
    async kgScan(after, limit) {
      return visibleFacts(await inner.kgScan(after, limit));
    },
    async kgStats(): Promise<KgStatsRow> {
      const entities = new Set<string>();
      const predicates = new Set<string>();
      let triples = 0;
      let current = 0;
      let after: { recorded_at: string; id: string } | undefined;
      for (;;) {
        const page = await inner.kgScan(after, SCAN_PAGE);
        for (const f of await visibleFacts(page)) {
          triples += 1;
          if (f.to_key === null) current += 1;
          entities.add(f.subject_id).add(f.object_id);
          predicates.add(f.predicate);
        }
        if (page.length < SCAN_PAGE) break;
        after = { recorded_at: page[page.length - 1]!.recorded_at, id: page[page.length - 1]!.id };
      }
      return { entities: entities.size, triples, current_facts: current, relationship_types: [...predicates].sort() };
    },
    async kgRestore(triples) {
      await assertFactsWritable(triples, 'restore facts');
      return inner.kgRestore(triples);
    },
    async tunnelUpsert(writes: TunnelWrite[]) {
      for (const w of writes) assertTunnelWritable(w, 'create a tunnel');
      return inner.tunnelUpsert(writes);
    },
    tunnelList: visibleTunnels,
    async tunnelDelete(id: string) {
      const found = (await inner.tunnelList()).find((t) => t.id === id);
      if (!found || !tunnelVisible(found)) return false;
      assertTunnelWritable(found, 'delete a tunnel');
      return inner.tunnelDelete(id);
    },
    async tunnelCount() {
      return (await visibleTunnels()).length;
    },
    async tunnelRestore(records: TunnelRestore[]) {
      for (const r of records) assertTunnelWritable(r, 'restore tunnels');
      return inner.tunnelRestore(records);
    },
    async hallwaysReplaceWing(wing, writes) {
      view.assertWritable(wing, 'replace hallways');
      for (const w of writes) view.assertWritable(w.wing, 'replace hallways');
      return inner.hallwaysReplaceWing(wing, writes);
    },
    async hallwayList(wing?: string) {
      if (wing !== undefined && !view.readable(wing)) return [];
      return (await inner.hallwayList(wing)).filter((h) => view.readable(h.wing));
    },
    async hallwayDelete(id: string) {
      const found = (await inner.hallwayList()).find((h) => h.id === id);
      if (!found || !view.readable(found.wing)) return false;
      view.assertWritable(found.wing, 'delete a hallway');
      return inner.hallwayDelete(id);
    },
    async hallwayRestore(records: HallwayRecord[]) {
      for (const r of records) view.assertWritable(r.wing, 'restore hallways');
      return inner.hallwayRestore(records);
    },
  };
  return withOverrides(inner, overrides);
}
