/**
 * Navigation tools (docs/tools.md §5): the room graph derived from drawer metadata, explicit
 * tunnels between locations, and hallways (entity co-occurrence within a wing).
 */
import { deleteHallway, listHallways } from '../../palace/graph/hallways.js';
import { findTunnels, graphStats, traverse } from '../../palace/graph/room-graph.js';
import type { GraphContext } from '../../palace/graph/room-graph.js';
import { createTunnel, deleteTunnel, followTunnels, listTunnels } from '../../palace/graph/tunnels.js';
import { TUNNEL, arrayOf, input, int, listOutput, output, shape, str, types } from '../schema.js';
import type { ToolContext, ToolDef } from '../types.js';

const { S, N, I, SN } = types;
const graphCtx = (ctx: ToolContext): GraphContext => ({ graph: ctx.runtime.stores.graph, drawers: ctx.runtime.stores.drawers });

const ROOM_WINGS = { wings: arrayOf(S), halls: arrayOf(S), count: I };
const HALLWAY = shape({
  id: S,
  wing: S,
  entity_a: S,
  entity_b: S,
  co_occurrence_count: I,
  rooms: arrayOf(S),
  label: S,
  created_at: S,
  created_by: S,
  strength: N,
  stability: N,
  last_activated: S,
  access_count: I,
});

export const navigationTools: ToolDef[] = [
  {
    name: 'mempalace_traverse',
    description:
      'Walk the room graph from one room to find connected ideas across wings: rooms sharing a wing are one hop apart. Returns the start room (hop 0) and up to 49 reached rooms, nearest first, each with the wings it was reached through.',
    inputSchema: input({
      start_room: str('Exact room name to start from.'),
      max_hops: int('How many hops to follow (1–10, clamped).', { minimum: 1, maximum: 10, default: 2 }),
    }, ['start_room']),
    outputSchema: listOutput(shape({ room: S, ...ROOM_WINGS, hop: I }, { connected_via: arrayOf(S) })),
    guards: {},
    errorShape: 'error',
    advisory: ['max_hops'],
    handler: (args, ctx) => traverse(graphCtx(ctx), args as { start_room: unknown }),
  },
  {
    name: 'mempalace_find_tunnels',
    description: 'Rooms that bridge wings (the same room name in two or more wings), optionally only those joining wing_a and wing_b; most drawers first.',
    inputSchema: input({ wing_a: str('First wing.'), wing_b: str('Second wing.') }),
    outputSchema: listOutput(shape({ room: S, ...ROOM_WINGS, recent: S })),
    guards: {},
    errorShape: 'error',
    handler: (args, ctx) => findTunnels(graphCtx(ctx), args),
  },
  {
    name: 'mempalace_graph_stats',
    description: 'Room-graph overview: rooms, rooms bridging wings, edges, rooms per wing and the rooms spanning the most wings.',
    inputSchema: input(),
    outputSchema: output(
      shape({ total_rooms: I, tunnel_rooms: I, total_edges: I, rooms_per_wing: types.counts,
        top_tunnels: arrayOf(shape({ room: S, wings: arrayOf(S), count: I })) }),
    ),
    guards: {},
    errorShape: 'error',
    handler: (_args, ctx) => graphStats(graphCtx(ctx)),
  },
  {
    name: 'mempalace_create_tunnel',
    description:
      'Link two locations (wing/room, optionally specific drawers) with an explicit tunnel and a label saying how they relate. Both rooms must exist. Creating the same pair again (in either order) relabels it.',
    inputSchema: input({
      source_wing: str('Wing of the source.'),
      source_room: str('Room in the source wing.'),
      target_wing: str('Wing of the target.'),
      target_room: str('Room in the target wing.'),
      label: str('How the two connect.'),
      source_drawer_id: str('A specific source drawer.'),
      target_drawer_id: str('A specific target drawer.'),
    }, ['source_wing', 'source_room', 'target_wing', 'target_room']),
    outputSchema: output(TUNNEL),
    guards: { mutating: true, readOnlyRefused: true },
    idempotent: true,
    errorShape: 'error',
    handler: (args, ctx) =>
      createTunnel({ ...graphCtx(ctx) }, args as { source_wing: unknown; source_room: unknown; target_wing: unknown; target_room: unknown }),
  },
  {
    name: 'mempalace_list_tunnels',
    description: 'List explicit tunnels in creation order, optionally only those touching one wing.',
    inputSchema: input({ wing: str('Only tunnels with an endpoint in this wing.') }),
    outputSchema: listOutput(TUNNEL),
    guards: {},
    errorShape: 'error',
    handler: (args, ctx) => listTunnels(graphCtx(ctx), args),
  },
  {
    name: 'mempalace_delete_tunnel',
    description: 'Delete an explicit tunnel by id. Idempotent: answers { deleted: id } whether or not it existed.',
    inputSchema: input({ tunnel_id: str('Tunnel to delete.') }, ['tunnel_id']),
    outputSchema: output(shape({ deleted: S })),
    guards: { mutating: true, readOnlyRefused: true },
    destructive: true,
    idempotent: true,
    errorShape: 'error',
    handler: (args, ctx) => deleteTunnel(graphCtx(ctx), args as { tunnel_id: unknown }),
  },
  {
    name: 'mempalace_list_hallways',
    description: 'List hallways: pairs of entities that occur together in a wing (built when mining), with their counts and rooms, optionally for one wing.',
    inputSchema: input({ wing: str('Only this wing (exact).') }),
    outputSchema: listOutput(HALLWAY),
    guards: {},
    errorShape: 'error',
    handler: (args, ctx) => listHallways(graphCtx(ctx), args as { wing?: unknown }),
  },
  {
    name: 'mempalace_delete_hallway',
    description: 'Delete one hallway record by id; answers { deleted: true } when a record was removed.',
    inputSchema: input({ hallway_id: str('Hallway to delete.') }, ['hallway_id']),
    outputSchema: output(shape({ deleted: types.B })),
    guards: { mutating: true, readOnlyRefused: true },
    destructive: true,
    idempotent: true,
    errorShape: 'error',
    handler: (args, ctx) => deleteHallway(graphCtx(ctx), args as { hallway_id: unknown }),
  },
  {
    name: 'mempalace_follow_tunnels',
    description:
      'From one wing/room, list where its explicit tunnels lead (outgoing when it is the source, incoming when the target), with the label and a preview of the linked drawer when one is recorded.',
    inputSchema: input({ wing: str('Wing to start from.'), room: str('Room to follow from.') }, ['wing', 'room']),
    outputSchema: listOutput(shape({ direction: S, connected_wing: S, connected_room: S, label: S, drawer_id: SN, tunnel_id: S }, { drawer_preview: S })),
    guards: {},
    errorShape: 'error',
    handler: (args, ctx) => followTunnels(graphCtx(ctx), args as { wing: unknown; room: unknown }),
  },
];
