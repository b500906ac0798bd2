/**
 * The room graph (docs/palace-behaviour.md §11.1–11.3, docs/tools.md §5.1–5.3), derived from drawer
 * metadata: a node is a room name spanning every wing that has a room of that name; rooms that
 * share a wing are adjacent; a room in two or more wings is an implicit ("passive") tunnel.
 * `general` rooms are nodes too (docs/decisions.md palace 6).
 */
import { invalidArgument, PalaceError } from '../../core/errors.js';
import { validateKgValue, validateOptionalName, wingSlug } from '../../core/validate.js';
import type { DrawerIndex } from '../../stores/ports/drawers/drawer-index.js';
import type { GraphStore } from '../../stores/ports/graph-store.js';
import { drawerMetadataPages } from './drawer-walk.js';

/** What the navigation operations need; `now` pins timestamps in tests. */
export interface GraphContext {
  graph: GraphStore;
  drawers: DrawerIndex;
  now?: () => Date;
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

export interface TraverseStep {
  room: string;
  wings: string[];
  halls: string[];
  count: number;
  hop: number;
  connected_via?: string[];
}

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

function maxHopsOf(value: unknown): number {
  if (value === undefined || value === null) return 2;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw invalidArgument('max_hops', 'integer', 'max_hops must be an integer');
  return Math.min(10, Math.max(1, value));
}

/**
 * Breadth-first walk from a room: hop 1 is every other room of the start room's wings, hop 2
 * the rooms of wings reached through a tunnel room, and so on up to `max_hops` (clamped 1–10).
 */
export async function traverse(ctx: Pick<GraphContext, 'drawers'>, input: { start_room: unknown; max_hops?: unknown }): Promise<TraverseStep[]> {
  const start = validateKgValue('start_room', input.start_room);
  const maxHops = maxHopsOf(input.max_hops);
  const nodes = await loadRoomGraph(ctx.drawers);
  const startNode = nodes.find((n) => n.room === start);
  if (!startNode) {
    throw new PalaceError('not_found', `Room '${start}' not found`, { field: 'start_room', rule: 'room_exists',
      details: { suggestions: suggestRooms(start, nodes) } });
  }
  const results: TraverseStep[] = [{ room: start, wings: startNode.wings, halls: startNode.halls, count: startNode.count, hop: 0 }];
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
}

// ---------------------------------------------------------------------------------------------
// find_tunnels and graph_stats

export interface TunnelRoom {
  room: string;
  wings: string[];
  halls: string[];
  count: number;
  recent: string;
}

/**
 * Rooms in two or more wings that include every given wing. Wings compare by slug on both
 * sides, so `My Wing`, `my-wing` and `my_wing` name the same wing.
 */
export async function findTunnels(ctx: Pick<GraphContext, 'drawers'>, input: { wing_a?: unknown; wing_b?: unknown } = {}): Promise<TunnelRoom[]> {
  const wanted = [validateOptionalName('wing_a', input.wing_a), validateOptionalName('wing_b', input.wing_b)]
    .filter((w): w is string => w !== undefined)
    .map(wingSlug);
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
}

export interface GraphStats {
  total_rooms: number;
  tunnel_rooms: number;
  total_edges: number;
  rooms_per_wing: Record<string, number>;
  top_tunnels: Array<{ room: string; wings: string[]; count: number }>;
  total_room_instances: number;
  passive_tunnel_rooms: number;
  explicit_tunnels: number;
  total_connections: number;
}

export async function graphStats(ctx: Pick<GraphContext, 'drawers' | 'graph'>): Promise<GraphStats> {
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
}
