/**
 * Hallways (docs/palace-behaviour.md §7.3, docs/tools.md §5.7–5.8): two entities that travel together in
 * the drawers of one wing. Built from the drawers' `entities` metadata after a mine, with the
 * later spelling canonicalisation (`auth.py`, `Auth` and `auth` are one entity).
 */
import { Type } from 'typebox';
import { hallwayId } from '../../core/ids.js';
import { codePointLength } from '../../core/text.js';
import { NAME_RULES, validateName } from '../../core/validate.js';
import type { HallwayRecord, HallwayWrite } from '../../stores/ports/graph-store.js';
import { nowOf } from '../context.js';
import { defineOperation } from '../operation.js';
import type { GraphContext } from './room-graph.js';
import { graphStoreContext, recordIdOperation, wingFilterInput } from './room-graph.js';
import { drawerMetadataPages } from './drawer-walk.js';
import { connectionTimestamp } from './tunnels.js';

const LABEL_ROOMS = 3;
const CODE_EXTENSIONS = new Set(
  'py js ts tsx jsx mjs cjs zig swift rs go md json yaml yml toml sh c h cpp hpp java kt rb php html css sql txt cs vue svelte'.split(' '),
);

/** Spelling key: last path segment, a known code extension removed, lowercased. */
export function spellingKey(entity: string): string {
  const segment = entity.split(/[/\\]/).at(-1) ?? '';
  const dot = segment.lastIndexOf('.');
  const base = dot > 0 && CODE_EXTENSIONS.has(segment.slice(dot + 1).toLowerCase()) ? segment.slice(0, dot) : segment;
  return base.toLowerCase();
}

/** The preferred of two spellings: fewer code points, then the smaller string. */
function preferred(a: string, b: string): string {
  const la = codePointLength(a);
  const lb = codePointLength(b);
  if (la !== lb) return la < lb ? a : b;
  return a <= b ? a : b;
}

export function hallwayLabel(a: string, b: string, count: number, rooms: readonly string[]): string {
  const drawers = `${count} drawer${count === 1 ? '' : 's'}`;
  if (rooms.length === 0) return `${a} ↔ ${b} (co-occur in ${drawers} across no rooms: (no room tags))`;
  const more = rooms.length > LABEL_ROOMS ? `, +${rooms.length - LABEL_ROOMS} more` : '';
  const shown = rooms.slice(0, LABEL_ROOMS).join(', ');
  return `${a} ↔ ${b} (co-occur in ${drawers} across ${rooms.length} room${rooms.length === 1 ? '' : 's'}: ${shown}${more})`;
}

/**
 * Recompute one wing's hallways from its drawers and replace that wing's records (other wings
 * untouched, dynamics of surviving records kept). Pairs seen in fewer than `minCount` drawers
 * (clamped to at least 1) are dropped. Returns the new records.
 */
export async function buildHallwaysForWing(ctx: Pick<GraphContext, 'graph' | 'drawers' | 'now'>, wing: string, minCount = 2): Promise<HallwayRecord[]> {
  const w = validateName('wing', wing);
  const threshold = Math.max(1, Math.floor(minCount));
  const display = new Map<string, string>();
  const pairs = new Map<string, { a: string; b: string; count: number; rooms: Set<string> }>();
  for await (const page of drawerMetadataPages(ctx.drawers, { wing: w })) {
    for (const d of page) {
      if (d.meta.is_sentinel === true || typeof d.meta.entities !== 'string') continue;
      const inDrawer = new Map<string, string>();
      for (const raw of d.meta.entities.split(';')) {
        const name = raw.trim();
        const key = spellingKey(name);
        if (name === '' || key === '') continue;
        const seen = inDrawer.get(key);
        inDrawer.set(key, seen === undefined ? name : preferred(seen, name));
      }
      for (const [key, name] of inDrawer) {
        const seen = display.get(key);
        display.set(key, seen === undefined ? name : preferred(seen, name));
      }
      const keys = [...inDrawer.keys()];
      const room = typeof d.meta.room === 'string' ? d.meta.room.trim() : '';
      for (let i = 0; i < keys.length; i++) {
        for (let j = i + 1; j < keys.length; j++) {
          const [a, b] = [keys[i]!, keys[j]!].sort() as [string, string];
          const pairKey = JSON.stringify([a, b]);
          let pair = pairs.get(pairKey);
          if (!pair) pairs.set(pairKey, pair = { a, b, count: 0, rooms: new Set() });
          pair.count += 1;
          if (room !== '') pair.rooms.add(room);
        }
      }
    }
  }

  const createdAt = connectionTimestamp(nowOf(ctx));
  const writes: HallwayWrite[] = [];
  for (const pair of pairs.values()) {
    if (pair.count < threshold) continue;
    const [a, b] = [display.get(pair.a)!, display.get(pair.b)!].sort() as [string, string];
    const rooms = [...pair.rooms].sort();
    writes.push({
      id: hallwayId(w, a, b),
      wing: w,
      entity_a: a,
      entity_b: b,
      co_occurrence_count: pair.count,
      rooms,
      label: hallwayLabel(a, b, pair.count, rooms),
      created_at: createdAt,
      created_by: 'auto',
    });
  }
  writes.sort((x, y) => (x.entity_a < y.entity_a ? -1 : x.entity_a > y.entity_a ? 1 : x.entity_b < y.entity_b ? -1 : x.entity_b > y.entity_b ? 1 : 0));
  return ctx.graph.hallwaysReplaceWing(w, writes);
}

const HALLWAY_ID_MAX = 1024;

const HALLWAY = Type.Object({
  id: Type.String(),
  wing: Type.String(),
  entity_a: Type.String(),
  entity_b: Type.String(),
  co_occurrence_count: Type.Integer(),
  rooms: Type.Array(Type.String()),
  label: Type.String(),
  created_at: Type.String(),
  created_by: Type.String(),
  strength: Type.Number(),
  stability: Type.Number(),
  last_activated: Type.String(),
  access_count: Type.Integer(),
});

/** All hallways, or one wing's (exact match). */
export const listHallwaysOperation = defineOperation({
  name: 'list_hallways',
  input: wingFilterInput('Only this wing (exact).'),
  output: Type.Array(HALLWAY),
  rules: NAME_RULES,
  context: graphStoreContext,
  run: async (input, ctx): Promise<HallwayRecord[]> => ctx.graph.hallwayList(input.wing?.trim() || undefined),
});

/** Reports whether a hallway had the id. */
export const deleteHallwayOperation = recordIdOperation({ name: 'delete_hallway', field: 'hallway_id', description: 'Hallway to delete.', max: HALLWAY_ID_MAX,
  output: Type.Object({ deleted: Type.Boolean() }), run: async (graph, id) => ({ deleted: await graph.hallwayDelete(id) }) });
