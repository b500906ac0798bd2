/**
 * Hallways on Neo4j: one `Hallway` node per record (`key = palace + U+0000 + id`, `rooms` kept
 * as JSON text like the embedded adapter). Replacing a wing first locks that wing's
 * `HallwayWing` node, so two replacements of one wing run one after the other and never both
 * delete the same records.
 */
import neo4j, { type ManagedTransaction } from 'neo4j-driver';
import { compareCodePoints } from '../../core/scan.js';
import { dynamicsById, hallwayRecord, toHallwayRecord, type StoredHallway } from '../shared/graph-records.js';
import type { ConnectionDynamics, HallwayRecord, HallwayWrite } from '../ports/graph-store.js';
import { LABEL_HALLWAY, palaceKey, restoreNodes } from './schema.js';

/** The embedded adapter's order: (wing, entity_a, entity_b) by code point. */
function byWingAndEntities(a: HallwayRecord, b: HallwayRecord): number {
  return compareCodePoints(a.wing, b.wing) || compareCodePoints(a.entity_a, b.entity_a) || compareCodePoints(a.entity_b, b.entity_b);
}

export class HallwayCypher {
  constructor(private readonly palace: string) {}

  /** A record as its node's properties: `rooms` as JSON text, counts as Neo4j integers. */
  private stored(r: HallwayRecord) {
    return {
      ...r,
      key: palaceKey(this.palace, r.id),
      palace: this.palace,
      rooms: JSON.stringify(r.rooms),
      co_occurrence_count: neo4j.int(r.co_occurrence_count),
      access_count: neo4j.int(r.access_count),
    };
  }

  async replaceWing(tx: ManagedTransaction, wing: string, writes: HallwayWrite[]): Promise<HallwayRecord[]> {
    const removed = await tx.run(
      `MERGE (l:HallwayWing {key: $wing_key}) ON CREATE SET l.palace = $palace, l.wing = $wing
       SET l.write_lock = true REMOVE l.write_lock
       WITH l
       OPTIONAL MATCH (h:Hallway {palace: $palace, wing: $wing})
       WITH collect(h {.id, .strength, .stability, .last_activated, .access_count}) AS previous, collect(h) AS old
       FOREACH (h IN old | DELETE h)
       RETURN previous`,
      { palace: this.palace, wing, wing_key: palaceKey(this.palace, wing) },
    );
    const previous = dynamicsById(removed.records[0]!.get('previous') as Array<ConnectionDynamics & { id: string }>);
    const records = writes.map((w) => hallwayRecord(wing, w, previous));
    if (records.length === 0) return records;
    // An id still present (in another wing) keeps its stored dynamics, as SQLite's upsert does.
    await tx.run(
      `UNWIND $records AS r
       MERGE (h:Hallway {key: r.key})
       ON CREATE SET h.palace = $palace, h.id = r.id, h.strength = r.strength, h.stability = r.stability,
                     h.last_activated = r.last_activated, h.access_count = r.access_count
       SET h.wing = r.wing, h.entity_a = r.entity_a, h.entity_b = r.entity_b, h.co_occurrence_count = r.co_occurrence_count,
           h.rooms = r.rooms, h.label = r.label, h.created_at = r.created_at, h.created_by = r.created_by`,
      {
        palace: this.palace,
        records: records.map((r) => this.stored(r)),
      },
    );
    return records;
  }

  async list(tx: ManagedTransaction, wing?: string): Promise<HallwayRecord[]> {
    const result = wing === undefined
      ? await tx.run('MATCH (h:Hallway {palace: $palace}) RETURN h {.*} AS h', { palace: this.palace })
      : await tx.run('MATCH (h:Hallway {palace: $palace, wing: $wing}) RETURN h {.*} AS h', { palace: this.palace, wing });
    return result.records.map((r) => toHallwayRecord(r.get('h') as StoredHallway)).sort(byWingAndEntities);
  }

  async restore(tx: ManagedTransaction, records: HallwayRecord[]): Promise<void> {
    await restoreNodes(tx, LABEL_HALLWAY, records.map((r) => this.stored(r)));
  }

  async delete(tx: ManagedTransaction, id: string): Promise<boolean> {
    const result = await tx.run('MATCH (h:Hallway {key: $key}) WHERE h.palace = $palace DELETE h RETURN count(*) AS deleted', { key: palaceKey(this.palace, id),
      palace: this.palace });
    return (result.records[0]!.get('deleted') as number) > 0;
  }
}
