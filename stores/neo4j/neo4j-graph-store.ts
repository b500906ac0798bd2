/**
 * GraphStore on Neo4j (cluster profile). Each port call is one managed transaction; the data of
 * one palace is everything whose `palace` property is its name (schema.ts).
 */
import neo4j from 'neo4j-driver';
import type { Config } from '../../core/config.js';
import type { GraphStore, HallwayRecord, HallwayWrite, KgDirection, KgEntityRef, KgFactChange, KgInvertedInterval, KgStatsRow, KgTriple, KgTripleWrite,
  TunnelFilter, TunnelRecord, TunnelRestore, TunnelWrite } from '../ports/graph-store.js';
import { Neo4jConnection, NEO4J_STORE, type Neo4jConnectionOptions } from './connection.js';
import { HallwayCypher } from './hallways.js';
import { KgCypher } from './kg.js';
import { checkPalaceName, ensureSchema, PALACE_LABELS } from './schema.js';
import { SerialQueue } from './serial-queue.js';
import { TunnelCypher } from './tunnels.js';

export interface Neo4jGraphOptions extends Neo4jConnectionOptions {
  /** The palace whose graph this store reads and writes. */
  palaceName: string;
}

const DROP_BATCH = 1_000;

export class Neo4jGraphStore implements GraphStore {
  readonly storeName = NEO4J_STORE;
  private readonly kg: KgCypher;
  private readonly tunnels: TunnelCypher;
  private readonly hallways: HallwayCypher;
  /** Tunnel and hallway writes of this instance apply in call order, as on the embedded side. */
  private readonly connectionWrites = new SerialQueue();

  private constructor(private readonly conn: Neo4jConnection, readonly palace: string) {
    this.kg = new KgCypher(palace);
    this.tunnels = new TunnelCypher(palace);
    this.hallways = new HallwayCypher(palace);
  }

  /** Connect, check the server answers, and create the schema if missing. */
  static async open(options: Neo4jGraphOptions): Promise<Neo4jGraphStore> {
    const palace = checkPalaceName(options.palaceName);
    const conn = new Neo4jConnection(options);
    try {
      await conn.verify();
      await ensureSchema(conn);
    } catch (e) {
      await conn.close();
      throw e;
    }
    return new Neo4jGraphStore(conn, palace);
  }

  kgAdd(triple: KgTripleWrite): Promise<{ triple_id: string; inserted: boolean }> {
    return this.conn.write((tx) => this.kg.add(tx, triple));
  }

  kgInvalidate(
    q: { subject_id: string; predicate: string; object_id: string; ended: string; ended_key: string; max_from_key: string; change: KgFactChange },
  ): Promise<{ status: 'ok'; closed: number } | KgInvertedInterval> {
    return this.conn.write((tx) => this.kg.invalidate(tx, q));
  }

  kgSupersede(
    q: { old_object: KgEntityRef; successor: KgTripleWrite },
  ): Promise<{ status: 'ok'; triple_id: string; inserted: boolean; closed: number } | KgInvertedInterval> {
    const s = q.successor;
    const { valid_from: boundary, from_key: boundaryKey } = s;
    if (boundary === null || boundaryKey === null) return Promise.reject(new Error('kgSupersede: the successor must carry the boundary as valid_from'));
    return this.conn.write((tx) => this.kg.supersede(tx, q.old_object, { ...s, valid_from: boundary, from_key: boundaryKey }));
  }

  kgFacts(q: { entity_id: string; direction: KgDirection; as_of_key?: string | undefined }): Promise<Array<KgTriple & { direction: 'outgoing' | 'incoming' }>> {
    return this.conn.read((tx) => this.kg.facts(tx, q));
  }

  kgTimeline(q: { entity_id?: string | undefined; limit: number }): Promise<KgTriple[]> {
    return this.conn.read((tx) => this.kg.timeline(tx, q));
  }

  kgSetEnd(q: { id: string; valid_to: string | null; to_key: string | null } & KgFactChange): Promise<boolean> {
    return this.conn.write((tx) => this.kg.setEnd(tx, q));
  }

  kgStats(): Promise<KgStatsRow> {
    return this.conn.read((tx) => this.kg.stats(tx));
  }

  tunnelUpsert(writes: TunnelWrite[]): Promise<TunnelRecord[]> {
    return this.connectionWrites.run(() => this.conn.write((tx) => this.tunnels.upsert(tx, writes)));
  }

  tunnelList(filter: TunnelFilter = {}): Promise<TunnelRecord[]> {
    return this.conn.read((tx) => this.tunnels.list(tx, filter));
  }

  tunnelDelete(id: string): Promise<boolean> {
    return this.connectionWrites.run(() => this.conn.write((tx) => this.tunnels.delete(tx, id)));
  }

  tunnelCount(): Promise<number> {
    return this.conn.read((tx) => this.tunnels.count(tx));
  }

  hallwaysReplaceWing(wing: string, writes: HallwayWrite[]): Promise<HallwayRecord[]> {
    return this.connectionWrites.run(() => this.conn.write((tx) => this.hallways.replaceWing(tx, wing, writes)));
  }

  hallwayList(wing?: string): Promise<HallwayRecord[]> {
    return this.conn.read((tx) => this.hallways.list(tx, wing));
  }

  hallwayDelete(id: string): Promise<boolean> {
    return this.connectionWrites.run(() => this.conn.write((tx) => this.hallways.delete(tx, id)));
  }

  kgScan(after: { recorded_at: string; id: string } | undefined, limit: number): Promise<KgTriple[]> {
    return this.conn.read((tx) => this.kg.scan(tx, after, limit));
  }

  kgRestore(triples: KgTriple[]): Promise<number> {
    return this.conn.write((tx) => this.kg.restore(tx, triples));
  }

  tunnelRestore(records: TunnelRestore[]): Promise<void> {
    return this.connectionWrites.run(() => this.conn.write((tx) => this.tunnels.restore(tx, records)));
  }

  hallwayRestore(records: HallwayRecord[]): Promise<void> {
    return this.connectionWrites.run(() => this.conn.write((tx) => this.hallways.restore(tx, records)));
  }

  /**
   * Delete every node (and with it every relationship) of this palace, in batches of 1 000 per
   * transaction so a large palace never needs one huge transaction. For removing a palace from
   * the cluster and for tests that run under a throwaway palace name.
   */
  async dropPalace(): Promise<number> {
    let dropped = 0;
    for (const label of PALACE_LABELS) {
      for (;;) {
        const n = await this.conn.write(async (tx) => {
          // The label comes from the fixed list above, never from input.
          const result = await tx.run(`MATCH (n:${label} {palace: $palace}) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS n`, { palace: this.palace,
            batch: neo4j.int(DROP_BATCH) });
          return result.records[0]!.get('n') as number;
        });
        dropped += n;
        if (n < DROP_BATCH) break;
      }
    }
    return dropped;
  }

  close(): Promise<void> {
    return this.conn.close();
  }
}

/** The cluster profile's graph store for the configured palace. */
export function openNeo4jGraphStore(config: Pick<Config, 'neo4j' | 'palaceName'>,
  tuning: Omit<Neo4jConnectionOptions, 'uri' | 'user' | 'password'> = {}): Promise<Neo4jGraphStore> {
  return Neo4jGraphStore.open({ ...config.neo4j, ...tuning, palaceName: config.palaceName });
}
