/**
 * Navigation tools (docs/tools.md §5): the room graph derived from drawer metadata, explicit
 * tunnels between locations, and hallways (entity co-occurrence within a wing), as bindings of
 * the operations of palace/graph/.
 */
import { deleteHallwayOperation, listHallwaysOperation } from '../../palace/graph/hallways.js';
import { findTunnelsOperation, graphStatsOperation, traverseOperation } from '../../palace/graph/room-graph.js';
import { createTunnelOperation, deleteTunnelOperation, followTunnelsOperation, listTunnelsOperation } from '../../palace/graph/tunnels.js';
import { toolOf } from '../bind.js';
import type { ToolDef } from '../types.js';

export const navigationTools: ToolDef[] = [
  toolOf(traverseOperation, {
    description:
      'Walk the room graph from one room to find connected ideas across wings: rooms sharing a wing are one hop apart. Returns the start room (hop 0) and up to 49 reached rooms, nearest first, each with the wings it was reached through.',
    guards: {},
    errorShape: 'error',
  }),
  toolOf(findTunnelsOperation, {
    description: 'Rooms that bridge wings (the same room name in two or more wings), optionally only those joining wing_a and wing_b; most drawers first.',
    guards: {},
    errorShape: 'error',
  }),
  toolOf(graphStatsOperation, {
    description: 'Room-graph overview: rooms, rooms bridging wings, edges, rooms per wing and the rooms spanning the most wings.',
    guards: {},
    errorShape: 'error',
  }),
  toolOf(createTunnelOperation, {
    description:
      'Link two locations (wing/room, optionally specific drawers) with an explicit tunnel and a label saying how they relate. Both rooms must exist. Creating the same pair again (in either order) relabels it, recording who did beside who created it.',
    guards: { mutating: true, readOnlyRefused: true },
    idempotent: true,
    errorShape: 'error',
  }),
  toolOf(listTunnelsOperation, {
    description: 'List explicit tunnels in creation order, optionally only those touching one wing.',
    guards: {},
    errorShape: 'error',
  }),
  toolOf(deleteTunnelOperation, {
    description: 'Delete an explicit tunnel by id. Idempotent: answers { deleted: id } whether or not it existed.',
    guards: { mutating: true, readOnlyRefused: true },
    destructive: true,
    idempotent: true,
    errorShape: 'error',
  }),
  toolOf(listHallwaysOperation, {
    description: 'List hallways: pairs of entities that occur together in a wing (built when mining), with their counts and rooms, optionally for one wing.',
    guards: {},
    errorShape: 'error',
  }),
  toolOf(deleteHallwayOperation, {
    description: 'Delete one hallway record by id; answers { deleted: true } when a record was removed.',
    guards: { mutating: true, readOnlyRefused: true },
    destructive: true,
    idempotent: true,
    errorShape: 'error',
  }),
  toolOf(followTunnelsOperation, {
    description:
      'From one wing/room, list where its explicit tunnels lead (outgoing when it is the source, incoming when the target), with the label and a preview of the linked drawer when one is recorded.',
    guards: {},
    errorShape: 'error',
  }),
];
