/**
 * The room graph (docs/palace-behaviour.md §11.1–11.3, docs/tools.md §5.1–5.3), derived from drawer
 * metadata: a node is a room name spanning every wing that has a room of that name; rooms that
 * share a wing are adjacent; a room in two or more wings is an implicit ("passive") tunnel.
 * `general` rooms are nodes too (docs/decisions.md palace 6).
 */
import { Type } from 'typebox';
import type { Static, TSchema, TString } from 'typebox';
import { PalaceError } from '../../core/errors.js';
import { countsSchema, INPUT_FORMATS, NON_BLANK } from '../../core/schema.js';
import { NAME_RULES, validateKgValue, validateRequiredText, wingSlug } from '../../core/validate.js';
import type { DrawerIndex } from '../../stores/ports/drawers/drawer-index.js';
import type { GraphStore } from '../../stores/ports/graph-store.js';
import { callActor } from '../context.js';
import type { CallActor } from '../context.js';
import { clampToSchema, defineOperation } from '../operation.js';
import type { Runtime } from '../runtime.js';
import { drawerMetadataPages } from './drawer-walk.js';

/** What the navigation operations need; `now` pins timestamps in tests, `actor` is who creates or changes a tunnel. */
export interface GraphContext extends CallActor {
  graph: GraphStore;
  drawers: DrawerIndex;
  now?: () => Date;
}

/** The navigation operations' context, from the runtime every face holds. */
export const graphContext = (rt: Runtime): GraphContext => ({ graph: rt.stores.graph, drawers: rt.stores.drawers, ...callActor(rt) });
/** The context of the operations that read or write only the graph store. */
export const graphStoreContext = (rt: Runtime): Pick<GraphContext, 'graph'> => ({ graph: rt.stores.graph });

/** The input of a graph listing that one wing may narrow (list_tunnels, list_hallways). */
export const wingFilterInput = (description: string) =>
  Type.Object({ wing: Type.Optional(Type.String({ description, format: INPUT_FORMATS.name })) }, { additionalProperties: false });

/**
 * An operation on one graph record named by its id (delete_tunnel, delete_hallway): a blank id is
 * refused as missing (`required`), so is one longer than `max` characters or holding NUL.
 */
export function recordIdOperation<Field extends string, Out extends TSchema>(
  spec: { name: string; field: Field; description: string; max: number; output: Out; run: (graph: GraphStore, id: string) => Promise<Static<Out>> },
) {
  return defineOperation({
    name: spec.name,
    input: Type.Object({ [spec.field]: Type.String({ description: spec.description }) } as Record<Field, TString>, { additionalProperties: false }),
    output: spec.output,
    rules: ['required', 'max_length', 'null_bytes'],
    context: graphStoreContext,
    run: (input, ctx) => spec.run(ctx.graph, validateRequiredText(spec.field, (input as Record<Field, string>)[spec.field], spec.max)),
  });
}

export interface RoomNode {
  room: string;
  /** Sorted. */
  wings: string[];
  /** Sorted. */
  halls: string[];
  /** Drawer rows in this room across its wings. */
  count: number;
  /** The last five of the sorted distinct `date` values. */
  dates: string[];
}

const CACHE_TTL_MS = 60_000;
const RESULT_CAP = 50;
const MAX_DATES = 5;
const SUGGESTIONS = 5;

interface Facets {
  halls: Map<string, Set<string>>;
  dates: Map<string, Set<string>>;
}

/**
 * Halls and dates per room come from a metadata scan, which is the costly part; it is reused
 * for up to 60 s while the grouped (wing, room, count) taxonomy is unchanged, so a write that
 * adds or removes drawers is seen at once.
 */
const facetCache = new WeakMap<DrawerIndex, { fingerprint: string; expires: number; facets: Facets }>();

async function scanFacets(drawers: DrawerIndex): Promise<Facets> {
  const facets: Facets = { halls: new Map(), dates: new Map() };
  const add = (map: Map<string, Set<string>>, room: string, value: unknown) => {
    if (typeof value !== 'string' || value === '') return;
    let set = map.get(room);
    if (!set) map.set(room, set = new Set());
    set.add(value);
  };
  for await (const page of drawerMetadataPages(drawers, {})) {
    for (const d of page) {
      if (!d.meta.room || !d.meta.wing) continue;
      add(facets.halls, d.meta.room, d.meta.hall);
      add(facets.dates, d.meta.room, d.meta.date);
    }
  }
  return facets;
}

/** The nodes of the room graph, sorted by room name (the stable "first seen" order). */
export async function loadRoomGraph(drawers: DrawerIndex): Promise<RoomNode[]> {
  const rows = (await drawers.taxonomy()).filter((r) => r.room !== '' && r.wing !== '');
  if (rows.length === 0) return [];
  const fingerprint = JSON.stringify(rows);
  const cached = facetCache.get(drawers);
  let facets: Facets;
  if (cached && cached.fingerprint === fingerprint && cached.expires > Date.now()) {
    facets = cached.facets;
  } else {
    facets = await scanFacets(drawers);
    facetCache.set(drawers, { fingerprint, expires: Date.now() + CACHE_TTL_MS, facets });
  }
  const byRoom = new Map<string, { wings: Set<string>; count: number }>();
  for (const r of rows) {
    let node = byRoom.get(r.room);
    if (!node) byRoom.set(r.room, node = { wings: new Set(), count: 0 });
    node.wings.add(r.wing);
    node.count += r.count;
  }
  return [...byRoom.keys()].sort().map((room) => {
    const node = byRoom.get(room)!;
    return {
      room,
      wings: [...node.wings].sort(),
      halls: [...(facets.halls.get(room) ?? [])].sort(),
      count: node.count,
      dates: [...(facets.dates.get(room) ?? [])].sort().slice(-MAX_DATES),
    };
  });
}

// ---------------------------------------------------------------------------------------------
// traverse

/** Up to five room names: containing the query first, then containing one of its `-` words. */
function suggestRooms(query: string, nodes: RoomNode[]): string[] {
  const q = query.toLowerCase();
  const words = q.split('-').filter((w) => w !== '');
  const scored: Array<{ room: string; score: number }> = [];
  for (const n of nodes) {
    const name = n.room.toLowerCase();
    if (name.includes(q)) scored.push({ room: n.room, score: 1 });
    else if (words.some((w) => name.includes(w))) scored.push({ room: n.room, score: 0.5 });
  }
  return scored.sort((a, b) => b.score - a.score).slice(0, SUGGESTIONS).map((s) => s.room);
}

const ROOM_WINGS = { wings: Type.Array(Type.String()), halls: Type.Array(Type.String()), count: Type.Integer() };
const TRAVERSE_INPUT = Type.Object({
  start_room: Type.String({ description: 'Exact room name to start from.', pattern: NON_BLANK }),
  max_hops: Type.Optional(Type.Integer({ description: 'How many hops to follow (1–10, clamped).', minimum: 1, maximum: 10, default: 2 })),
}, { additionalProperties: false });
const TRAVERSE_STEP = Type.Object({ room: Type.String(), ...ROOM_WINGS, hop: Type.Integer(), connected_via: Type.Optional(Type.Array(Type.String())) });

/**
 * Breadth-first walk from a room: hop 1 is every other room of the start room's wings, hop 2
 * the rooms of wings reached through a tunnel room, and so on up to `max_hops` (clamped 1–10).
 */
export const traverseOperation = defineOperation({
  name: 'traverse',
  input: TRAVERSE_INPUT,
  output: Type.Array(TRAVERSE_STEP),
  clamped: ['max_hops'],
  /** The start room is a KG value (at most 128 characters, no NUL) and must exist. */
  rules: ['max_length', 'null_bytes', 'room_exists'],
  context: graphContext,
  async run(input, ctx) {
    const start = validateKgValue('start_room', input.start_room);
    const maxHops = clampToSchema(TRAVERSE_INPUT.properties.max_hops, input.max_hops);
    const nodes = await loadRoomGraph(ctx.drawers);
    const startNode = nodes.find((n) => n.room === start);
    if (!startNode) {
      throw new PalaceError('not_found', `Room '${start}' not found`, { field: 'start_room', rule: 'room_exists',
        details: { suggestions: suggestRooms(start, nodes) } });
    }
    const results: Static<typeof TRAVERSE_STEP>[] = [{ room: start, wings: startNode.wings, halls: startNode.halls, count: startNode.count, hop: 0 }];
    const visited = new Set([start]);
    const queue: Array<{ node: RoomNode; depth: number }> = [{ node: startNode, depth: 0 }];
    while (queue.length > 0) {
      const { node: current, depth } = queue.shift()!;
      if (depth >= maxHops) continue;
      const here = new Set(current.wings);
      for (const n of nodes) {
        if (visited.has(n.room)) continue;
        const shared = n.wings.filter((w) => here.has(w));
        if (shared.length === 0) continue;
        visited.add(n.room);
        results.push({ room: n.room, wings: n.wings, halls: n.halls, count: n.count, hop: depth + 1, connected_via: shared.sort() });
        if (depth + 1 < maxHops) queue.push({ node: n, depth: depth + 1 });
      }
    }
    // Array.prototype.sort is stable, so equal (hop, count) keep discovery order.
    return results.sort((a, b) => a.hop - b.hop || b.count - a.count).slice(0, RESULT_CAP);
  },
});

// ---------------------------------------------------------------------------------------------
// find_tunnels and graph_stats

const optionalWing = (description: string) => Type.Optional(Type.String({ description, format: INPUT_FORMATS.name }));

/**
 * Rooms in two or more wings that include every given wing. Wings compare by slug on both
 * sides, so `My Wing`, `my-wing` and `my_wing` name the same wing.
 */
export const findTunnelsOperation = defineOperation({
  name: 'find_tunnels',
  input: Type.Object({ wing_a: optionalWing('First wing.'), wing_b: optionalWing('Second wing.') }, { additionalProperties: false }),
  output: Type.Array(Type.Object({ room: Type.String(), ...ROOM_WINGS, recent: Type.String() })),
  rules: NAME_RULES,
  context: graphContext,
  async run(input, ctx) {
    const wanted = [input.wing_a, input.wing_b].map((w) => w?.trim()).filter((w): w is string => w !== undefined && w !== '').map(wingSlug);
    const nodes = await loadRoomGraph(ctx.drawers);
    return nodes
      .filter((n) => n.wings.length >= 2)
      .filter((n) => {
        const slugs = new Set(n.wings.map(wingSlug));
        return wanted.every((w) => slugs.has(w));
      })
      .map((n) => ({ room: n.room, wings: n.wings, halls: n.halls, count: n.count, recent: n.dates.at(-1) ?? '' }))
      .sort((a, b) => b.count - a.count)
      .slice(0, RESULT_CAP);
  },
});

export const graphStatsOperation = defineOperation({
  name: 'graph_stats',
  input: Type.Object({}, { additionalProperties: false }),
  output: Type.Object({
    total_rooms: Type.Integer(),
    tunnel_rooms: Type.Integer(),
    total_edges: Type.Integer(),
    rooms_per_wing: countsSchema(),
    top_tunnels: Type.Array(Type.Object({ room: Type.String(), wings: Type.Array(Type.String()), count: Type.Integer() })),
    total_room_instances: Type.Integer(),
    passive_tunnel_rooms: Type.Integer(),
    explicit_tunnels: Type.Integer(),
    total_connections: Type.Integer(),
  }),
  context: graphContext,
  async run(_input, ctx) {
    const [nodes, explicit] = await Promise.all([loadRoomGraph(ctx.drawers), ctx.graph.tunnelCount()]);
    const tunnels = nodes.filter((n) => n.wings.length >= 2);
    // An edge is one (wing_a < wing_b, hall) combination of a tunnel room.
    const totalEdges = tunnels.reduce((sum, n) => sum + ((n.wings.length * (n.wings.length - 1)) / 2) * n.halls.length, 0);
    const perWing = new Map<string, number>();
    for (const n of nodes) for (const w of n.wings) perWing.set(w, (perWing.get(w) ?? 0) + 1);
    const roomsPerWing = Object.fromEntries([...perWing].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
    const top = [...nodes]
      .sort((a, b) => b.wings.length - a.wings.length || (a.room < b.room ? -1 : a.room > b.room ? 1 : 0))
      .slice(0, 10)
      .filter((n) => n.wings.length >= 2)
      .map((n) => ({ room: n.room, wings: n.wings, count: n.count }));
    return {
      total_rooms: nodes.length,
      tunnel_rooms: tunnels.length,
      total_edges: totalEdges,
      rooms_per_wing: roomsPerWing,
      top_tunnels: top,
      total_room_instances: [...perWing.values()].reduce((a, b) => a + b, 0),
      passive_tunnel_rooms: tunnels.length,
      explicit_tunnels: explicit,
      total_connections: totalEdges + explicit,
    };
  },
});
