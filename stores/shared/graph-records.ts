/**
 * Shaping stored graph records into the port's types, shared by the SQLite and Neo4j graph
 * stores so both return the same records. An absent optional field comes back as null from
 * SQLite and as a missing property from Neo4j (which stores no nulls); both mean "absent" here.
 */
import type { ConnectionDynamics, HallwayRecord, HallwayWrite, KgTriple, TunnelEndpoint, TunnelKind, TunnelRecord, TunnelRestore,
  TunnelWrite } from '../ports/graph-store.js';

/** Defaults of docs/palace-behaviour.md §11.5 for a record created at `at`. */
export function defaultDynamics(at: string): ConnectionDynamics {
  return { strength: 1.0, stability: 1.0, last_activated: at, access_count: 0 };
}

/** The dynamics of stored records by id, so re-created records keep theirs. */
export function dynamicsById(rows: Iterable<ConnectionDynamics & { id: string }>): Map<string, ConnectionDynamics> {
  const byId = new Map<string, ConnectionDynamics>();
  for (const r of rows) byId.set(r.id, { strength: r.strength, stability: r.stability, last_activated: r.last_activated, access_count: r.access_count });
  return byId;
}

/** The record a wing's hallway write becomes: its id's previous dynamics, else the defaults. */
export function hallwayRecord(wing: string, write: HallwayWrite, previous: Map<string, ConnectionDynamics>): HallwayRecord {
  return { ...write, wing, ...(previous.get(write.id) ?? defaultDynamics(write.created_at)) };
}

/** A fact's own stored fields. */
export interface StoredFact {
  id: string;
  predicate: string;
  valid_from?: string | null;
  valid_to?: string | null;
  from_key?: string | null;
  to_key?: string | null;
  confidence: number;
  source_closet?: string | null;
  source_file?: string | null;
  source_drawer_id?: string | null;
  adapter_name?: string | null;
  recorded_at: string;
  created_by?: string | null;
  updated_by?: string | null;
  updated_at?: string | null;
}

/** A fact's entities: ids and stored (first) spellings. */
export interface FactEnds {
  subject_id: string;
  subject_name: string;
  object_id: string;
  object_name: string;
}

export function toKgTriple(fact: StoredFact, ends: FactEnds): KgTriple {
  return {
    id: fact.id,
    subject_id: ends.subject_id,
    subject_name: ends.subject_name,
    predicate: fact.predicate,
    object_id: ends.object_id,
    object_name: ends.object_name,
    valid_from: fact.valid_from ?? null,
    valid_to: fact.valid_to ?? null,
    from_key: fact.from_key ?? null,
    to_key: fact.to_key ?? null,
    confidence: fact.confidence,
    source_closet: fact.source_closet ?? null,
    source_file: fact.source_file ?? null,
    source_drawer_id: fact.source_drawer_id ?? null,
    adapter_name: fact.adapter_name ?? null,
    recorded_at: fact.recorded_at,
    created_by: fact.created_by ?? null,
    updated_by: fact.updated_by ?? null,
    updated_at: fact.updated_at ?? null,
  };
}

/** A tunnel as stored: flat endpoint fields. */
export interface StoredTunnel extends ConnectionDynamics {
  id: string;
  source_wing: string;
  source_room: string;
  source_drawer_id?: string | null;
  target_wing: string;
  target_room: string;
  target_drawer_id?: string | null;
  label: string;
  kind: string;
  created_at: string;
  created_by?: string | null;
  updated_at?: string | null;
  updated_by?: string | null;
}

/** A tunnel's link as both stores keep it: flat endpoint fields, null for no drawer. */
function flatLink(t: Pick<TunnelWrite, 'id' | 'source' | 'target' | 'label' | 'kind' | 'source_wing_key' | 'target_wing_key'>) {
  return {
    id: t.id,
    source_wing: t.source.wing,
    source_room: t.source.room,
    source_drawer_id: t.source.drawer_id ?? null,
    source_wing_key: t.source_wing_key,
    target_wing: t.target.wing,
    target_room: t.target.room,
    target_drawer_id: t.target.drawer_id ?? null,
    target_wing_key: t.target_wing_key,
    label: t.label,
    kind: t.kind,
  };
}

/** A tunnel write's fields as both stores take them. */
export function tunnelWriteFields(w: TunnelWrite) {
  return { ...flatLink(w), at: w.at, by: w.by };
}

function endpoint(wing: string, room: string, drawerId: string | null | undefined): TunnelEndpoint {
  return drawerId === null || drawerId === undefined ? { wing, room } : { wing, room, drawer_id: drawerId };
}

/** A restored tunnel's stored fields: null for no drawer, no update or an unknown actor. */
export function storedTunnel(r: TunnelRestore) {
  return {
    ...flatLink(r),
    created_at: r.created_at,
    created_by: r.created_by ?? null,
    updated_at: r.updated_at ?? null,
    updated_by: r.updated_by ?? null,
    strength: r.strength,
    stability: r.stability,
    last_activated: r.last_activated,
    access_count: r.access_count,
  };
}

/** `{ [key]: value }` when the store holds a value, else nothing (the record's field is absent). */
function present<K extends string>(key: K, value: string | null | undefined): { [k in K]?: string } {
  return value === null || value === undefined ? {} : ({ [key]: value } as { [k in K]?: string });
}

export function toTunnelRecord(t: StoredTunnel): TunnelRecord {
  return {
    id: t.id,
    source: endpoint(t.source_wing, t.source_room, t.source_drawer_id),
    target: endpoint(t.target_wing, t.target_room, t.target_drawer_id),
    label: t.label,
    kind: t.kind as TunnelKind,
    created_at: t.created_at,
    ...present('created_by', t.created_by),
    ...present('updated_at', t.updated_at),
    ...present('updated_by', t.updated_by),
    strength: t.strength,
    stability: t.stability,
    last_activated: t.last_activated,
    access_count: t.access_count,
  };
}

/** A hallway as stored: `rooms` as JSON text. */
export type StoredHallway = Omit<HallwayRecord, 'rooms'> & { rooms: string };

export function toHallwayRecord(h: StoredHallway): HallwayRecord {
  return {
    id: h.id,
    wing: h.wing,
    entity_a: h.entity_a,
    entity_b: h.entity_b,
    co_occurrence_count: h.co_occurrence_count,
    rooms: JSON.parse(h.rooms) as string[],
    label: h.label,
    created_at: h.created_at,
    created_by: h.created_by,
    strength: h.strength,
    stability: h.stability,
    last_activated: h.last_activated,
    access_count: h.access_count,
  };
}
