/**
 * The graph store port: the temporal knowledge graph, tunnels and hallways. Implemented by
 * `embedded/` (SQLite) and `neo4j/`; tests/contract/graph-store.contract.ts defines its meaning.
 */

/**
 * Validity keys: the palace turns each temporal value into a UTC instant `YYYY-MM-DDTHH:MM:SSZ`
 * once (start key for `valid_from`/`as_of`/`at`, end key for `valid_to`/`ended`, docs/decisions.md palace 7),
 * so every adapter compares plain strings and never parses dates. A fact holds at instant `t`
 * iff `(from_key IS NULL OR from_key <= t) AND (to_key IS NULL OR to_key > t)`.
 */
export interface KgEntityRef {
  /** Normalised entity id (lowercase, spaces to `_`, apostrophes removed). */
  id: string;
  /** Spelling used when the entity is first created; an existing entity keeps its first one. */
  name: string;
}

/** What a fact stores about itself, as written and as read back. */
interface KgFactFields {
  id: string;
  predicate: string;
  /** As given by the caller (validated), returned verbatim. */
  valid_from: string | null;
  valid_to: string | null;
  from_key: string | null;
  to_key: string | null;
  confidence: number;
  source_closet: string | null;
  source_file: string | null;
  source_drawer_id: string | null;
  adapter_name: string | null;
  /** UTC instant with microseconds; with `id` it orders facts in storage order. */
  recorded_at: string;
  /** Who added the fact (the call's actor); null when unknown (added outside a face, or before issue 28). */
  created_by: string | null;
}

/** A triple to store; the id and `recorded_at` are made by the palace so adapters agree. */
export interface KgTripleWrite extends KgFactFields {
  subject: KgEntityRef;
  object: KgEntityRef;
}

/**
 * Who last changed a fact and when (its end set by an invalidation, a supersession or a revert);
 * both null while it is as it was added, or when the change was made without an actor (`updated_by` only).
 */
export interface KgFactChange {
  updated_by: string | null;
  updated_at: string | null;
}

export interface KgTriple extends KgFactFields, KgFactChange {
  subject_id: string;
  /** The entity's stored (first) spelling. */
  subject_name: string;
  object_id: string;
  object_name: string;
}

/** An end that would fall before an open fact's start; nothing was written. */
export interface KgInvertedInterval {
  status: 'inverted';
  triple_id: string;
  valid_from: string | null;
}

export interface KgStatsRow {
  entities: number;
  triples: number;
  /** Triples with no `valid_to`. */
  current_facts: number;
  /** Distinct predicates, ascending. */
  relationship_types: string[];
}

export type KgDirection = 'outgoing' | 'incoming' | 'both';

export interface TunnelEndpoint {
  wing: string;
  room: string;
  drawer_id?: string;
}

export type TunnelKind = 'explicit' | 'topic' | 'entity';

/** Connection dynamics (docs/palace-behaviour.md §11.5), kept across re-creation and recomputation. */
export interface ConnectionDynamics {
  strength: number;
  stability: number;
  last_activated: string;
  access_count: number;
}

export interface TunnelRecord extends ConnectionDynamics {
  /** Symmetric: hash16 of the two sorted `wing/room` endpoints. */
  id: string;
  source: TunnelEndpoint;
  target: TunnelEndpoint;
  label: string;
  kind: TunnelKind;
  created_at: string;
  /** Who created it (the call's actor); absent when unknown (made outside a face, or before issue 28). */
  created_by?: string;
  updated_at?: string;
  /** Who last changed it; absent when it is unchanged or its last change had no actor. */
  updated_by?: string;
}

export interface TunnelWrite {
  id: string;
  source: TunnelEndpoint;
  target: TunnelEndpoint;
  label: string;
  kind: TunnelKind;
  /** Slug of each endpoint's wing (the palace's one normalisation), for wing lookups. */
  source_wing_key: string;
  target_wing_key: string;
  /** The write's instant: `created_at` of a new record, `updated_at` of an existing one. */
  at: string;
  /** The write's actor likewise: `created_by` or `updated_by`; null when unknown (the field is then absent). */
  by: string | null;
}

export interface TunnelFilter {
  /** Tunnels with an endpoint whose wing key equals this ... */
  wing_key?: string | undefined;
  /** ... and, when set, whose room equals this exactly (on that same endpoint). */
  room?: string | undefined;
}

export interface HallwayRecord extends ConnectionDynamics {
  id: string;
  wing: string;
  entity_a: string;
  entity_b: string;
  co_occurrence_count: number;
  rooms: string[];
  label: string;
  created_at: string;
  created_by: string;
}

export type HallwayWrite = Omit<HallwayRecord, keyof ConnectionDynamics>;

/**
 * Knowledge graph, explicit/topic/entity tunnels and hallways. Every method is one atomic unit
 * on the engine (one SQLite transaction, one Cypher transaction); none reads and then writes
 * across calls, so concurrent callers never lose an update.
 */
export interface GraphStore {
  /** The store's name in errors (`sqlite`, `neo4j`). */
  readonly storeName: string;

  /**
   * Create missing subject/object entities, then insert `triple` unless an equivalent fact
   * exists: for an open triple (no `to_key`) an open triple with the same subject, predicate
   * and object; for a closed one a triple with the same subject, predicate, object, `from_key`
   * and `to_key`. Returns the stored or existing id.
   */
  kgAdd(triple: KgTripleWrite): Promise<{ triple_id: string; inserted: boolean }>;
  /**
   * Close every open (subject, predicate, object) triple with `valid_to = ended`, `to_key =
   * ended_key` and `change` as its `updated_by`/`updated_at`. If any of them has `from_key > max_from_key` nothing is written and the first
   * such triple is reported.
   */
  kgInvalidate(
    q: { subject_id: string; predicate: string; object_id: string; ended: string; ended_key: string; max_from_key: string; change: KgFactChange },
  ): Promise<{ status: 'ok'; closed: number } | KgInvertedInterval>;
  /**
   * One transaction: create missing entities (subject, old and new object); close every open
   * (subject, predicate, old object) triple at `successor.valid_from`/`from_key` (the boundary),
   * changed by the successor's `created_by` at its `recorded_at`;
   * then return the open (subject, predicate, new object) triple if one exists, else insert
   * `successor`. If an open old triple starts after the boundary nothing is written.
   */
  kgSupersede(
    q: { old_object: KgEntityRef; successor: KgTripleWrite },
  ): Promise<{ status: 'ok'; triple_id: string; inserted: boolean; closed: number } | KgInvertedInterval>;
  /**
   * Facts of one entity valid at `as_of_key` (all when absent): outgoing (`subject_id = id`)
   * first, then incoming (`object_id = id`); each direction ordered by (recorded_at, id).
   */
  kgFacts(q: { entity_id: string; direction: KgDirection; as_of_key?: string | undefined }): Promise<Array<KgTriple & { direction: 'outgoing' | 'incoming' }>>;
  /**
   * Facts touching the entity (or all), ordered by `from_key` ascending with nulls last, then
   * (recorded_at, id); at most `limit`.
   */
  kgTimeline(q: { entity_id?: string | undefined; limit: number }): Promise<KgTriple[]>;
  kgStats(): Promise<KgStatsRow>;
  /**
   * Set one fact's end and who changed it verbatim (`null` reopens it), for revert (issue 28);
   * false when no fact has that id.
   */
  kgSetEnd(q: { id: string; valid_to: string | null; to_key: string | null } & KgFactChange): Promise<boolean>;

  /**
   * Insert or update each tunnel by id, in order, atomically. An existing record gets the
   * write's endpoints, label and kind, `updated_at = at` and `updated_by = by`, keeping
   * `created_at`, `created_by` and its dynamics; a new one gets `created_at = at`,
   * `created_by = by` and default dynamics. Returns the stored records.
   */
  tunnelUpsert(writes: TunnelWrite[]): Promise<TunnelRecord[]>;
  /** Tunnels in storage order: (created_at, id) ascending. */
  tunnelList(filter?: TunnelFilter): Promise<TunnelRecord[]>;
  tunnelDelete(id: string): Promise<boolean>;
  tunnelCount(): Promise<number>;

  /**
   * Replace one wing's hallways atomically: its old records go, `writes` come in, and a new
   * record whose id existed before keeps that record's dynamics. Returns the stored records.
   */
  hallwaysReplaceWing(wing: string, writes: HallwayWrite[]): Promise<HallwayRecord[]>;
  /** Hallways of one wing (exact match) or all, ordered by (wing, entity_a, entity_b). */
  hallwayList(wing?: string): Promise<HallwayRecord[]>;
  hallwayDelete(id: string): Promise<boolean>;

  /**
   * Backup and migration: up to `limit` triples in storage order (recorded_at, id), starting
   * after the triple `after` names.
   */
  kgScan(after: { recorded_at: string; id: string } | undefined, limit: number): Promise<KgTriple[]>;
  /**
   * Restore triples verbatim (id, validity, `recorded_at`, who added and changed them, entity names), in one transaction; a
   * triple whose id is held is left as it is, missing entities are created with the triple's
   * spelling. Returns how many were inserted.
   */
  kgRestore(triples: KgTriple[]): Promise<number>;
  /** Restore tunnel records verbatim by id (timestamps, who created and changed them, and dynamics included), atomically. */
  tunnelRestore(records: TunnelRestore[]): Promise<void>;
  /** Restore hallway records verbatim by id (dynamics included), atomically. */
  hallwayRestore(records: HallwayRecord[]): Promise<void>;

  close(): Promise<void>;
}

/** A tunnel record with the wing keys it is looked up by. */
export interface TunnelRestore extends TunnelRecord {
  source_wing_key: string;
  target_wing_key: string;
}
