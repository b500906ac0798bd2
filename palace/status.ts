/**
 * Palace overview counts (mcp-tools §2.1–2.4), answered from stored metadata only.
 */
import { validateOptionalName } from '../core/validate.js';
import type { DrawerIndex } from '../stores/ports/drawers/drawer-index.js';

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

export async function listWings(drawers: DrawerIndex) {
  return { wings: (await palaceCounts(drawers)).wings };
}

export async function listRooms(drawers: DrawerIndex, input: { wing?: unknown }) {
  const wing = validateOptionalName('wing', input.wing);
  const tree = await taxonomy(drawers);
  if (wing === undefined) return { wing: 'all', rooms: (await palaceCounts(drawers)).rooms };
  return { wing, rooms: tree[wing] ?? {} };
}
