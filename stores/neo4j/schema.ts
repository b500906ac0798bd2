/**
 * The graph schema on Neo4j, created idempotently when a store opens.
 *
 * Several palaces (and test runs) share Community edition's single `neo4j` database, so every
 * node and relationship carries its palace's name (`palace`), and identity is one combined
 * property `key = palace + U+0000 + id` with a uniqueness constraint (composite node keys need
 * Enterprise edition). Labels and relationship types are these fixed constants; no statement is
 * ever built from input.
 */
import { invalidArgument } from '../../core/errors.js';
import type { ManagedTransaction } from 'neo4j-driver';
import type { Neo4jConnection } from './connection.js';

export const LABEL_ENTITY = 'KgEntity';
export const REL_FACT = 'KG_FACT';
export const LABEL_TUNNEL = 'Tunnel';
export const LABEL_HALLWAY = 'Hallway';
/** One node per (palace, wing) that hallway replacements of that wing lock. */
export const LABEL_HALLWAY_WING = 'HallwayWing';

/** Labels of every node a palace owns (what dropping a palace deletes). */
export const PALACE_LABELS = [LABEL_ENTITY, LABEL_TUNNEL, LABEL_HALLWAY, LABEL_HALLWAY_WING] as const;

const STATEMENTS = [
  `CREATE CONSTRAINT mp_kg_entity_key IF NOT EXISTS FOR (n:${LABEL_ENTITY}) REQUIRE n.key IS UNIQUE`,
  `CREATE CONSTRAINT mp_kg_fact_key IF NOT EXISTS FOR ()-[r:${REL_FACT}]-() REQUIRE r.key IS UNIQUE`,
  `CREATE CONSTRAINT mp_tunnel_key IF NOT EXISTS FOR (n:${LABEL_TUNNEL}) REQUIRE n.key IS UNIQUE`,
  `CREATE CONSTRAINT mp_hallway_key IF NOT EXISTS FOR (n:${LABEL_HALLWAY}) REQUIRE n.key IS UNIQUE`,
  `CREATE CONSTRAINT mp_hallway_wing_key IF NOT EXISTS FOR (n:${LABEL_HALLWAY_WING}) REQUIRE n.key IS UNIQUE`,
  `CREATE INDEX mp_kg_entity_palace IF NOT EXISTS FOR (n:${LABEL_ENTITY}) ON (n.palace)`,
  `CREATE INDEX mp_kg_fact_palace IF NOT EXISTS FOR ()-[r:${REL_FACT}]-() ON (r.palace)`,
  `CREATE INDEX mp_tunnel_palace IF NOT EXISTS FOR (n:${LABEL_TUNNEL}) ON (n.palace)`,
  `CREATE INDEX mp_hallway_palace_wing IF NOT EXISTS FOR (n:${LABEL_HALLWAY}) ON (n.palace, n.wing)`,
  `CREATE INDEX mp_hallway_wing_palace IF NOT EXISTS FOR (n:${LABEL_HALLWAY_WING}) ON (n.palace)`,
];

// Two processes creating the same rule at once: the loser reports it as already there.
const ALREADY_THERE = /EquivalentSchemaRuleAlreadyExists|ConstraintAlreadyExists|IndexAlreadyExists/;

export async function ensureSchema(conn: Neo4jConnection): Promise<void> {
  for (const statement of STATEMENTS) {
    try {
      await conn.schema(statement);
    } catch (e) {
      const cause = (e as { cause?: { code?: unknown } }).cause;
      if (typeof cause?.code === 'string' && ALREADY_THERE.test(cause.code)) continue;
      throw e;
    }
  }
}

/** A palace name usable in keys: non-empty, at most 256 characters, no U+0000 (the separator). */
export function checkPalaceName(palace: unknown): string {
  if (typeof palace !== 'string' || palace.length === 0 || [...palace].length > 256 || palace.includes('\u0000')) {
    throw invalidArgument('palace_name', 'neo4j_palace_name', 'palace_name must be 1–256 characters without U+0000 (it namespaces the palace in Neo4j)');
  }
  return palace;
}

/** The unique identity property of a palace's node or relationship. */
export function palaceKey(palace: string, id: string): string {
  return `${palace}\u0000${id}`;
}

/**
 * Put records back verbatim as `label` nodes, one per `key` (palaceKey): each node's properties
 * become exactly its record's, so a property the record leaves null is removed.
 */
export async function restoreNodes(tx: ManagedTransaction, label: typeof LABEL_TUNNEL | typeof LABEL_HALLWAY,
  records: Array<Record<string, unknown> & { key: string }>): Promise<void> {
  if (records.length === 0) return;
  await tx.run(`UNWIND $records AS r MERGE (n:${label} {key: r.key}) SET n = r`, { records });
}
