/**
 * Explicit, topic and entity tunnels on Neo4j: one `Tunnel` node per record, identified by
 * `key = palace + U+0000 + id`. Upserts MERGE on that key (unique constraint), so concurrent
 * upserts of one id serialise on the constraint and produce one record.
 */
import neo4j, { type ManagedTransaction } from 'neo4j-driver';
import { compareCodePoints } from '../../core/scan.js';
import { storedTunnel, toTunnelRecord, tunnelWriteFields, type StoredTunnel } from '../shared/graph-records.js';
import type { TunnelFilter, TunnelRecord, TunnelRestore, TunnelWrite } from '../ports/graph-store.js';
import { LABEL_TUNNEL, palaceKey, restoreNodes } from './schema.js';

/** Storage order of the embedded adapter: (created_at, id) by code point. */
function byStorageOrder(a: TunnelRecord, b: TunnelRecord): number {
  return compareCodePoints(a.created_at, b.created_at) || compareCodePoints(a.id, b.id);
}

export class TunnelCypher {
  constructor(private readonly palace: string) {}

  async upsert(tx: ManagedTransaction, writes: TunnelWrite[]): Promise<TunnelRecord[]> {
    const out: TunnelRecord[] = [];
    // One statement per write, in order, so a later write of the same id sees the earlier one.
    for (const w of writes) {
      const result = await tx.run(
        `MERGE (t:Tunnel {key: $key})
         ON CREATE SET t.palace = $palace, t.id = $id, t.created_at = $at, t.created_by = $by,
                       t.strength = 1.0, t.stability = 1.0, t.last_activated = $at, t.access_count = 0
         ON MATCH SET t.updated_at = $at, t.updated_by = $by
         SET t.source_wing = $source_wing, t.source_room = $source_room, t.source_drawer_id = $source_drawer_id,
             t.source_wing_key = $source_wing_key, t.target_wing = $target_wing, t.target_room = $target_room,
             t.target_drawer_id = $target_drawer_id, t.target_wing_key = $target_wing_key, t.label = $label, t.kind = $kind
         RETURN t {.*} AS t`,
        { ...tunnelWriteFields(w), key: palaceKey(this.palace, w.id), palace: this.palace },
      );
      out.push(toTunnelRecord(result.records[0]!.get('t') as StoredTunnel));
    }
    return out;
  }

  async list(tx: ManagedTransaction, filter: TunnelFilter): Promise<TunnelRecord[]> {
    const result = await tx.run(
      `MATCH (t:Tunnel {palace: $palace})
       WHERE CASE WHEN $wing_key IS NULL THEN $room IS NULL OR t.source_room = $room OR t.target_room = $room
                  ELSE (t.source_wing_key = $wing_key AND ($room IS NULL OR t.source_room = $room))
                    OR (t.target_wing_key = $wing_key AND ($room IS NULL OR t.target_room = $room)) END
       RETURN t {.*} AS t`,
      { palace: this.palace, wing_key: filter.wing_key ?? null, room: filter.room ?? null },
    );
    return result.records.map((r) => toTunnelRecord(r.get('t') as StoredTunnel)).sort(byStorageOrder);
  }

  async delete(tx: ManagedTransaction, id: string): Promise<boolean> {
    const result = await tx.run('MATCH (t:Tunnel {key: $key}) WHERE t.palace = $palace DELETE t RETURN count(*) AS deleted', { key: palaceKey(this.palace, id),
      palace: this.palace });
    return (result.records[0]!.get('deleted') as number) > 0;
  }

  async restore(tx: ManagedTransaction, records: TunnelRestore[]): Promise<void> {
    await restoreNodes(tx, LABEL_TUNNEL,
      records.map((r) => ({ ...storedTunnel(r), key: palaceKey(this.palace, r.id), palace: this.palace, access_count: neo4j.int(r.access_count) })));
  }

  async count(tx: ManagedTransaction): Promise<number> {
    const result = await tx.run('MATCH (t:Tunnel {palace: $palace}) RETURN count(t) AS n', { palace: this.palace });
    return result.records[0]!.get('n') as number;
  }
}
