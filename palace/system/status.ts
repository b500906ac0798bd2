/**
 * Palace overview counts (docs/tools.md §2.1–2.4), answered from stored metadata only, and the
 * operations that serve them.
 */
import { Type } from 'typebox';
import { AAAK_SPEC, PALACE_PROTOCOL } from '../../core/protocol.js';
import { countsSchema, INPUT_FORMATS } from '../../core/schema.js';
import type { DrawerIndex } from '../../stores/ports/drawers/drawer-index.js';
import { defineOperation } from '../operation.js';

export async function taxonomy(drawers: DrawerIndex): Promise<Record<string, Record<string, number>>> {
  const out: Record<string, Record<string, number>> = {};
  for (const row of await drawers.taxonomy()) {
    const wing = row.wing || 'unknown';
    const room = row.room || 'unknown';
    (out[wing] ??= {})[room] = (out[wing]![room] ?? 0) + row.count;
  }
  return out;
}

export async function palaceCounts(drawers: DrawerIndex) {
  const tree = await taxonomy(drawers);
  const wings: Record<string, number> = {};
  const rooms: Record<string, number> = {};
  let total = 0;
  for (const [wing, byRoom] of Object.entries(tree)) {
    for (const [room, n] of Object.entries(byRoom)) {
      wings[wing] = (wings[wing] ?? 0) + n;
      rooms[room] = (rooms[room] ?? 0) + n;
      total += n;
    }
  }
  return { total_drawers: total, wings, rooms, backend: drawers.storeName };
}

const NO_INPUT = Type.Object({}, { additionalProperties: false });
const drawersOf = (rt: { stores: { drawers: DrawerIndex } }) => rt.stores.drawers;

/** The overview an agent reads first: counts, the memory protocol, the AAAK dialect. */
export const statusOperation = defineOperation({
  name: 'status',
  input: NO_INPUT,
  output: Type.Object({
    total_drawers: Type.Integer(),
    wings: countsSchema('Drawers per wing.'),
    rooms: countsSchema('Drawers per room.'),
    protocol: Type.String(),
    aaak_dialect: Type.String(),
    backend: Type.String(),
  }),
  context: drawersOf,
  run: async (_input, drawers) => ({ ...(await palaceCounts(drawers)), protocol: PALACE_PROTOCOL, aaak_dialect: AAAK_SPEC }),
});

export const listWingsOperation = defineOperation({
  name: 'list_wings',
  input: NO_INPUT,
  output: Type.Object({ wings: countsSchema('Drawers per wing.') }),
  context: drawersOf,
  run: async (_input, drawers) => ({ wings: (await palaceCounts(drawers)).wings }),
});

export const listRoomsOperation = defineOperation({
  name: 'list_rooms',
  input: Type.Object({ wing: Type.Optional(Type.String({ description: 'Wing to list rooms for; omit for all wings.', format: INPUT_FORMATS.name })) }, {
    additionalProperties: false,
  }),
  output: Type.Object({ wing: Type.String({ description: 'The wing listed, "all" without a filter.' }), rooms: countsSchema('Drawers per room.') }),
  context: drawersOf,
  async run(input, drawers) {
    const wing = input.wing?.trim() || undefined;
    if (wing === undefined) return { wing: 'all', rooms: (await palaceCounts(drawers)).rooms };
    return { wing, rooms: (await taxonomy(drawers))[wing] ?? {} };
  },
});

export const taxonomyOperation = defineOperation({
  name: 'get_taxonomy',
  input: NO_INPUT,
  output: Type.Object({
    taxonomy: Type.Unsafe<Record<string, Record<string, number>>>({ type: 'object', description: 'wing → room → drawer count',
      additionalProperties: countsSchema() }),
  }),
  context: drawersOf,
  run: async (_input, drawers) => ({ taxonomy: await taxonomy(drawers) }),
});

export const aaakSpecOperation = defineOperation({
  name: 'get_aaak_spec',
  input: NO_INPUT,
  output: Type.Object({ aaak_spec: Type.String() }),
  context: () => undefined,
  run: async () => ({ aaak_spec: AAAK_SPEC }),
});
