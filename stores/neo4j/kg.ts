/**
 * The temporal knowledge graph on Neo4j: entities are `KgEntity` nodes, facts are `KG_FACT`
 * relationships from subject to object carrying the triple's fields. Each function runs inside
 * one managed transaction that the caller opened.
 *
 * Storage order is (recorded_at, id) and the timeline orders by from_key first; those orders
 * use `*_order` copies of the fields (see sort-key.ts) so Neo4j sorts exactly like the embedded
 * adapter. Writes that read first (is there an open fact already?) lock the subject node, so
 * concurrent writers of one subject run one after the other, as SQLite's immediate
 * transactions do.
 */
import neo4j, { type ManagedTransaction } from 'neo4j-driver';
import { compareCodePoints } from '../../core/scan.js';
import { toKgTriple, type StoredFact } from '../shared/graph-records.js';
import type { KgDirection, KgEntityRef, KgFactChange, KgInvertedInterval, KgStatsRow, KgTriple, KgTripleWrite } from '../ports/graph-store.js';
import { Rollback } from './connection.js';
import { palaceKey } from './schema.js';
import { codePointSortKey } from './sort-key.js';

interface FactRow {
  t: StoredFact;
  subject_id: string;
  subject_name: string;
  object_id: string;
  object_name: string;
}

const FACT_RETURN = 'RETURN t {.*} AS t, s.id AS subject_id, s.name AS subject_name, o.id AS object_id, o.name AS object_name';
const STORAGE_ORDER = 't.recorded_order, t.id_order';
const VALID_AT = '($as_of IS NULL OR ((t.from_key IS NULL OR t.from_key <= $as_of) AND (t.to_key IS NULL OR t.to_key > $as_of)))';

// Creates the entity with its first spelling; an existing one keeps its name.
const MERGE_ENTITY = (v: string, param: string) =>
  `MERGE (${v}:KgEntity {key: $${param}.key}) ON CREATE SET ${v}.palace = $palace, ${v}.id = $${param}.id, ${v}.name = $${param}.name, ${v}.created_at = $at`;
// Writing a property takes the node's write lock until commit; the pair leaves no trace.
const LOCK = (v: string) => `SET ${v}.write_lock = true REMOVE ${v}.write_lock`;

function toTriple(r: FactRow): KgTriple {
  return toKgTriple(r.t, r);
}

function rows<T>(result: { records: Array<{ toObject(): unknown }> }): T[] {
  return result.records.map((r) => r.toObject() as T);
}

export class KgCypher {
  constructor(private readonly palace: string) {}

  private entity(ref: KgEntityRef): { key: string; id: string; name: string } {
    return { key: palaceKey(this.palace, ref.id), id: ref.id, name: ref.name };
  }

  /**
   * The relationship's properties: the fact's own fields (a new fact has no change yet), its key
   * and the sort keys; nulls are left out (Neo4j stores no null properties).
   */
  private factProps(t: KgTripleWrite & Partial<KgFactChange>): Record<string, unknown> {
    const { subject: _subject, object: _object, ...fields } = t;
    return {
      ...fields,
      updated_by: t.updated_by ?? null,
      updated_at: t.updated_at ?? null,
      key: palaceKey(this.palace, t.id),
      palace: this.palace,
      from_order: t.from_key === null ? null : codePointSortKey(t.from_key),
      recorded_order: codePointSortKey(t.recorded_at),
      id_order: codePointSortKey(t.id),
    };
  }

  async add(tx: ManagedTransaction, t: KgTripleWrite): Promise<{ triple_id: string; inserted: boolean }> {
    const result = await tx.run(
      `${MERGE_ENTITY('s', 'subject')}
       ${LOCK('s')}
       ${MERGE_ENTITY('o', 'object')}
       WITH s, o
       OPTIONAL MATCH (s)-[e:KG_FACT {palace: $palace, predicate: $predicate}]->(o)
       WHERE CASE WHEN $to_key IS NULL THEN e.to_key IS NULL
                  ELSE e.to_key = $to_key AND ((e.from_key IS NULL AND $from_key IS NULL) OR e.from_key = $from_key) END
       WITH s, o, e ORDER BY e.recorded_order, e.id_order
       WITH s, o, collect(e.id) AS existing
       FOREACH (_ IN CASE WHEN size(existing) = 0 THEN [1] ELSE [] END | CREATE (s)-[:KG_FACT $fact]->(o))
       RETURN existing[0] AS existing`,
      {
        palace: this.palace,
        at: t.recorded_at,
        subject: this.entity(t.subject),
        object: this.entity(t.object),
        predicate: t.predicate,
        from_key: t.from_key,
        to_key: t.to_key,
        fact: this.factProps(t),
      },
    );
    const existing = result.records[0]?.get('existing') as string | null;
    return existing === null ? { triple_id: t.id, inserted: true } : { triple_id: existing, inserted: false };
  }

  /** Open (s, p, o) facts in storage order, with the subject locked for the rest of the tx. */
  private async openFacts(tx: ManagedTransaction, subjectId: string, predicate: string,
    objectId: string): Promise<Array<{ id: string; valid_from: string | null; from_key: string | null }>> {
    const result = await tx.run(
      `MATCH (s:KgEntity {key: $subject_key})
       WHERE s.palace = $palace
       ${LOCK('s')}
       WITH s
       MATCH (s)-[t:KG_FACT {palace: $palace, predicate: $predicate}]->(o:KgEntity {key: $object_key})
       WHERE t.to_key IS NULL
       RETURN t.id AS id, t.valid_from AS valid_from, t.from_key AS from_key
       ORDER BY ${STORAGE_ORDER}`,
      { palace: this.palace, subject_key: palaceKey(this.palace, subjectId), object_key: palaceKey(this.palace, objectId), predicate },
    );
    return rows(result);
  }

  private async closeOpen(tx: ManagedTransaction, subjectId: string, predicate: string, objectId: string, validTo: string, toKey: string,
    change: KgFactChange): Promise<number> {
    const result = await tx.run(
      `MATCH (s:KgEntity {key: $subject_key})-[t:KG_FACT {palace: $palace, predicate: $predicate}]->(o:KgEntity {key: $object_key})
       WHERE t.to_key IS NULL
       SET t.valid_to = $valid_to, t.to_key = $to_key, t.updated_by = $updated_by, t.updated_at = $updated_at
       RETURN count(t) AS closed`,
      { palace: this.palace, subject_key: palaceKey(this.palace, subjectId), object_key: palaceKey(this.palace, objectId), predicate, valid_to: validTo,
        to_key: toKey, ...change },
    );
    return result.records[0]!.get('closed') as number;
  }

  /** The first open fact starting after `maxFromKey` (compared by code point, like SQLite). */
  private static startsAfter(open: Array<{ id: string; valid_from: string | null; from_key: string | null }>, maxFromKey: string):
    | KgInvertedInterval
    | undefined {
    const row = open.find((r) => r.from_key !== null && compareCodePoints(r.from_key, maxFromKey) > 0);
    return row && { status: 'inverted', triple_id: row.id, valid_from: row.valid_from };
  }

  async invalidate(tx: ManagedTransaction,
    q: { subject_id: string; predicate: string; object_id: string; ended: string; ended_key: string; max_from_key: string; change: KgFactChange }
  ): Promise<{ status: 'ok'; closed: number } | KgInvertedInterval> {
    const open = await this.openFacts(tx, q.subject_id, q.predicate, q.object_id);
    const inverted = KgCypher.startsAfter(open, q.max_from_key);
    if (inverted) throw new Rollback(inverted);
    if (open.length === 0) return { status: 'ok', closed: 0 };
    return { status: 'ok', closed: await this.closeOpen(tx, q.subject_id, q.predicate, q.object_id, q.ended, q.ended_key, q.change) };
  }

  async supersede(tx: ManagedTransaction, oldObject: KgEntityRef,
    s: KgTripleWrite & { valid_from: string; from_key: string }
  ): Promise<{ status: 'ok'; triple_id: string; inserted: boolean; closed: number } | KgInvertedInterval> {
    await tx.run(
      `${MERGE_ENTITY('s', 'subject')}
       ${LOCK('s')}
       ${MERGE_ENTITY('old', 'old_object')}
       ${MERGE_ENTITY('new', 'new_object')}`,
      { palace: this.palace, at: s.recorded_at, subject: this.entity(s.subject), old_object: this.entity(oldObject), new_object: this.entity(s.object) },
    );
    const open = await this.openFacts(tx, s.subject.id, s.predicate, oldObject.id);
    // Rolling back also undoes the entities merged above: an inverted call writes nothing.
    const inverted = KgCypher.startsAfter(open, s.from_key);
    if (inverted) throw new Rollback(inverted);
    const closed = open.length === 0
      ? 0
      : await this.closeOpen(tx, s.subject.id, s.predicate, oldObject.id, s.valid_from, s.from_key, { updated_by: s.created_by, updated_at: s.recorded_at });
    const current = await this.openFacts(tx, s.subject.id, s.predicate, s.object.id);
    if (current.length > 0) return { status: 'ok', triple_id: current[0]!.id, inserted: false, closed };
    await tx.run(
      `MATCH (s:KgEntity {key: $subject_key}), (o:KgEntity {key: $object_key})
       WHERE s.palace = $palace AND o.palace = $palace
       CREATE (s)-[:KG_FACT $fact]->(o)`,
      { palace: this.palace, subject_key: palaceKey(this.palace, s.subject.id), object_key: palaceKey(this.palace, s.object.id), fact: this.factProps(s) },
    );
    return { status: 'ok', triple_id: s.id, inserted: true, closed };
  }

  async facts(tx: ManagedTransaction,
    q: { entity_id: string; direction: KgDirection; as_of_key?: string | undefined }): Promise<Array<KgTriple & { direction: 'outgoing' | 'incoming' }>> {
    // Both directions in one statement (one round trip); outgoing rows sort first.
    const result = await tx.run(
      `CALL () {
         MATCH (s:KgEntity {key: $key})-[t:KG_FACT]->(o:KgEntity)
         WHERE $outgoing AND t.palace = $palace AND ${VALID_AT}
         RETURN 'outgoing' AS direction, t, s, o
         UNION ALL
         MATCH (s:KgEntity)-[t:KG_FACT]->(o:KgEntity {key: $key})
         WHERE $incoming AND t.palace = $palace AND ${VALID_AT}
         RETURN 'incoming' AS direction, t, s, o
       }
       ${FACT_RETURN}, direction
       ORDER BY direction DESC, ${STORAGE_ORDER}`,
      {
        palace: this.palace,
        key: palaceKey(this.palace, q.entity_id),
        as_of: q.as_of_key ?? null,
        outgoing: q.direction !== 'incoming',
        incoming: q.direction !== 'outgoing',
      },
    );
    return rows<FactRow & { direction: 'outgoing' | 'incoming' }>(result).map((r) => ({ ...toTriple(r), direction: r.direction }));
  }

  async timeline(tx: ManagedTransaction, q: { entity_id?: string | undefined; limit: number }): Promise<KgTriple[]> {
    const order = `ORDER BY t.from_order IS NULL, t.from_order, ${STORAGE_ORDER} LIMIT $limit`;
    const result = q.entity_id === undefined
      ? await tx.run(`MATCH (s:KgEntity)-[t:KG_FACT {palace: $palace}]->(o:KgEntity) ${FACT_RETURN} ${order}`, { palace: this.palace,
        limit: neo4j.int(q.limit) })
      : await tx.run(
        `MATCH (e:KgEntity {key: $key})-[touching:KG_FACT {palace: $palace}]-()
           WITH DISTINCT touching AS t
           MATCH (s:KgEntity)-[t]->(o:KgEntity)
           ${FACT_RETURN} ${order}`,
        { palace: this.palace, key: palaceKey(this.palace, q.entity_id), limit: neo4j.int(q.limit) },
      );
    return rows<FactRow>(result).map(toTriple);
  }

  async scan(tx: ManagedTransaction, after: { recorded_at: string; id: string } | undefined, limit: number): Promise<KgTriple[]> {
    const result = await tx.run(
      `MATCH (s:KgEntity)-[t:KG_FACT {palace: $palace}]->(o:KgEntity)
       WHERE $after_recorded IS NULL OR t.recorded_order > $after_recorded OR (t.recorded_order = $after_recorded AND t.id_order > $after_id)
       ${FACT_RETURN} ORDER BY ${STORAGE_ORDER} LIMIT $limit`,
      {
        palace: this.palace,
        after_recorded: after === undefined ? null : codePointSortKey(after.recorded_at),
        after_id: after === undefined ? null : codePointSortKey(after.id),
        limit: neo4j.int(limit),
      },
    );
    return rows<FactRow>(result).map(toTriple);
  }

  /** Inserts each triple whose key is not held (entities merged with the triple's names). */
  async restore(tx: ManagedTransaction, triples: KgTriple[]): Promise<number> {
    if (triples.length === 0) return 0;
    const rows = triples.map(({ subject_id, subject_name, object_id, object_name, ...fact }) => {
      const subject = { id: subject_id, name: subject_name };
      const object = { id: object_id, name: object_name };
      return { subject: this.entity(subject), object: this.entity(object), fact: this.factProps({ ...fact, subject, object }) };
    });
    const result = await tx.run(
      `UNWIND $rows AS r
       MERGE (s:KgEntity {key: r.subject.key}) ON CREATE SET s.palace = $palace, s.id = r.subject.id, s.name = r.subject.name, s.created_at = r.fact.recorded_at
       MERGE (o:KgEntity {key: r.object.key}) ON CREATE SET o.palace = $palace, o.id = r.object.id, o.name = r.object.name, o.created_at = r.fact.recorded_at
       WITH s, o, r
       WHERE NOT EXISTS { MATCH ()-[:KG_FACT {key: r.fact.key}]->() }
       CREATE (s)-[f:KG_FACT]->(o) SET f = r.fact
       RETURN count(f) AS inserted`,
      { palace: this.palace, rows },
    );
    return result.records[0]!.get('inserted') as number;
  }

  async setEnd(tx: ManagedTransaction, q: { id: string; valid_to: string | null; to_key: string | null } & KgFactChange): Promise<boolean> {
    const result = await tx.run(
      `MATCH ()-[t:KG_FACT {key: $key}]->()
       SET t.valid_to = $valid_to, t.to_key = $to_key, t.updated_by = $updated_by, t.updated_at = $updated_at
       RETURN count(t) AS n`,
      { ...q, key: palaceKey(this.palace, q.id) },
    );
    return (result.records[0]!.get('n') as number) > 0;
  }

  async stats(tx: ManagedTransaction): Promise<KgStatsRow> {
    const result = await tx.run(
      `CALL () { MATCH (e:KgEntity {palace: $palace}) RETURN count(e) AS entities }
       CALL () { MATCH ()-[t:KG_FACT {palace: $palace}]->()
                 RETURN count(t) AS triples, count(t) - count(t.to_key) AS current_facts, collect(DISTINCT t.predicate) AS predicates }
       RETURN entities, triples, current_facts, predicates`,
      { palace: this.palace },
    );
    const r = result.records[0]!.toObject() as { entities: number; triples: number; current_facts: number; predicates: string[] };
    return { entities: r.entities, triples: r.triples, current_facts: r.current_facts, relationship_types: [...r.predicates].sort(compareCodePoints) };
  }
}
