/**
 * Explicit, topic and entity tunnels (docs/palace-behaviour.md §11.4, docs/tools.md §5.4–5.6, 5.9):
 * undirected links between two (wing, room) locations, kept in the GraphStore so they survive
 * rebuilds of the drawer index. Wings are stored verbatim and compared by slug.
 */
import { Type } from 'typebox';
import type { Static } from 'typebox';
import { isPalaceError, PalaceError } from '../../core/errors.js';
import { tunnelId } from '../../core/ids.js';
import { INPUT_FORMATS, NON_BLANK, nullable } from '../../core/schema.js';
import { codePointSlice } from '../../core/text.js';
import { NAME_RULES, validateName, validateOptionalText, wingSlug } from '../../core/validate.js';
import type { DrawerIndex } from '../../stores/ports/drawers/drawer-index.js';
import type { GraphStore, TunnelEndpoint, TunnelKind, TunnelRecord, TunnelWrite } from '../../stores/ports/graph-store.js';
import { nowOf } from '../context.js';
import { recordedAt } from '../kg/kg.js';
import { defineOperation } from '../operation.js';
import type { GraphContext } from './room-graph.js';
import { graphContext, graphStoreContext, recordIdOperation, wingFilterInput } from './room-graph.js';

const LABEL_MAX = 1000;
const ID_MAX = 512;
const PREVIEW_CHARS = 300;
const CHUNK_ROWS_MAX = 1000;

/** `created_at`/`updated_at` of tunnels and hallways: UTC with offset, microseconds, increasing. */
export function connectionTimestamp(now: Date): string {
  return recordedAt(now).replace(/Z$/, '+00:00');
}

function endpointOf(wing: string, room: string, drawerId: string | undefined): TunnelEndpoint {
  return drawerId === undefined ? { wing, room } : { wing, room, drawer_id: drawerId };
}

/** `at` and `by`: when and by whom (null: unknown) the tunnel is created, or changed if it exists. */
function tunnelWrite(kind: TunnelKind, source: TunnelEndpoint, target: TunnelEndpoint, label: string, at: string, by: string | undefined): TunnelWrite {
  return {
    id: tunnelId(`${source.wing}/${source.room}`, `${target.wing}/${target.room}`),
    source,
    target,
    label,
    kind,
    source_wing_key: wingSlug(source.wing),
    target_wing_key: wingSlug(target.wing),
    at,
    by: by ?? null,
  };
}

/** A room exists when one drawer has that exact wing and room; an unreachable store allows it. */
async function roomExists(drawers: DrawerIndex, wing: string, room: string): Promise<boolean> {
  try {
    return (await drawers.count({ wing, room })) > 0;
  } catch (e) {
    if (isPalaceError(e) && e.code === 'store_unavailable') return true;
    throw e;
  }
}

/** A wing or room: its rules are the palace-name format. */
const name = (description: string) => Type.String({ description, pattern: NON_BLANK, format: INPUT_FORMATS.name });
const optionalText = (description: string) => Type.Optional(Type.String({ description }));

const ENDPOINT = Type.Object({ wing: Type.String(), room: Type.String(), drawer_id: Type.Optional(Type.String()) });
const TUNNEL = Type.Object({
  id: Type.String(),
  source: ENDPOINT,
  target: ENDPOINT,
  label: Type.String(),
  kind: Type.String(),
  created_at: Type.String(),
  strength: Type.Number(),
  stability: Type.Number(),
  last_activated: Type.String(),
  access_count: Type.Integer(),
  updated_at: Type.Optional(Type.String()),
  /** Who created it and who last changed it (issue 28); absent when unknown. */
  created_by: Type.Optional(Type.String()),
  updated_by: Type.Optional(Type.String()),
});

/** Create or relabel an explicit tunnel; the same two endpoints in either order are one tunnel. */
export const createTunnelOperation = defineOperation({
  name: 'create_tunnel',
  input: Type.Object({
    source_wing: name('Wing of the source.'),
    source_room: name('Room in the source wing.'),
    target_wing: name('Wing of the target.'),
    target_room: name('Room in the target wing.'),
    label: optionalText('How the two connect.'),
    source_drawer_id: optionalText('A specific source drawer.'),
    target_drawer_id: optionalText('A specific target drawer.'),
  }, { additionalProperties: false }),
  output: TUNNEL,
  /** Label at most 1000 characters, drawer ids 512, neither with NUL; both rooms must exist. */
  rules: [...NAME_RULES, 'max_length', 'null_bytes', 'room_exists'],
  context: graphContext,
  async run(input, ctx): Promise<TunnelRecord> {
    const sourceWing = input.source_wing.trim();
    const sourceRoom = input.source_room.trim();
    const targetWing = input.target_wing.trim();
    const targetRoom = input.target_room.trim();
    const label = validateOptionalText('label', input.label, LABEL_MAX) ?? '';
    const sourceDrawer = validateOptionalText('source_drawer_id', input.source_drawer_id, ID_MAX);
    const targetDrawer = validateOptionalText('target_drawer_id', input.target_drawer_id, ID_MAX);
    for (const [side, field, wing, room] of [['Source', 'source_room', sourceWing, sourceRoom], ['Target', 'target_room', targetWing, targetRoom]] as const) {
      if (!(await roomExists(ctx.drawers, wing, room))) {
        throw new PalaceError('not_found', `${side} room '${room}' does not exist in wing '${wing}'`, { field, rule: 'room_exists' });
      }
    }
    const write = tunnelWrite('explicit', endpointOf(sourceWing, sourceRoom, sourceDrawer), endpointOf(targetWing, targetRoom, targetDrawer), label,
      connectionTimestamp(nowOf(ctx)), ctx.actor);
    const [record] = await ctx.graph.tunnelUpsert([write]);
    return record!;
  },
});

/** All tunnels, or those with an endpoint in `wing` (compared by slug), in storage order. */
export const listTunnelsOperation = defineOperation({
  name: 'list_tunnels',
  input: wingFilterInput('Only tunnels with an endpoint in this wing.'),
  output: Type.Array(TUNNEL),
  rules: NAME_RULES,
  context: graphStoreContext,
  async run(input, ctx): Promise<TunnelRecord[]> {
    const wing = input.wing?.trim() || undefined;
    return ctx.graph.tunnelList(wing === undefined ? {} : { wing_key: wingSlug(wing) });
  },
});

/** Idempotent: reports the id whether or not a tunnel had it. */
async function deleteTunnel(graph: GraphStore, id: string): Promise<{ deleted: string }> {
  await graph.tunnelDelete(id);
  return { deleted: id };
}

export const deleteTunnelOperation = recordIdOperation({ name: 'delete_tunnel', field: 'tunnel_id', description: 'Tunnel to delete.', max: ID_MAX,
  output: Type.Object({ deleted: Type.String() }), run: deleteTunnel });

const CONNECTION = Type.Object({
  direction: Type.String(),
  connected_wing: Type.String(),
  connected_room: Type.String(),
  label: Type.String(),
  drawer_id: nullable(Type.String()),
  tunnel_id: Type.String(),
  drawer_preview: Type.Optional(Type.String()),
});

/** First 300 characters of a drawer (a physical row, else the logical drawer's chunks). */
async function drawerPreview(drawers: DrawerIndex, id: string): Promise<string | undefined> {
  try {
    const [row] = await drawers.get([id]);
    let content = row?.content;
    if (content === undefined) {
      // One logical drawer; the limit also covers adapters that page by row (≤ 125 chunks).
      const page = await drawers.list({ parentId: id }, 0, CHUNK_ROWS_MAX);
      const rows = [...page.items].sort((a, b) => a.meta.chunk_index - b.meta.chunk_index || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      if (rows.length > 0) content = rows.map((d) => d.content).join('');
    }
    return content === undefined ? undefined : codePointSlice(content, 0, PREVIEW_CHARS);
  } catch (e) {
    if (isPalaceError(e) && e.code === 'store_unavailable') return undefined;
    throw e;
  }
}

/** Where the tunnels of one location lead: `outgoing` when it is the source, else `incoming`. */
export const followTunnelsOperation = defineOperation({
  name: 'follow_tunnels',
  input: Type.Object({ wing: name('Wing to start from.'), room: name('Room to follow from.') }, { additionalProperties: false }),
  output: Type.Array(CONNECTION),
  rules: NAME_RULES,
  context: graphContext,
  async run(input, ctx) {
    const wing = input.wing.trim();
    const room = input.room.trim();
    const key = wingSlug(wing);
    const out: Static<typeof CONNECTION>[] = [];
    for (const t of await ctx.graph.tunnelList({ wing_key: key, room })) {
      const outgoing = wingSlug(t.source.wing) === key && t.source.room === room;
      const other = outgoing ? t.target : t.source;
      const connection: Static<typeof CONNECTION> = {
        direction: outgoing ? 'outgoing' : 'incoming',
        connected_wing: other.wing,
        connected_room: other.room,
        label: t.label,
        drawer_id: other.drawer_id ?? null,
        tunnel_id: t.id,
      };
      if (other.drawer_id !== undefined) {
        const preview = await drawerPreview(ctx.drawers, other.drawer_id);
        if (preview !== undefined) connection.drawer_preview = preview;
      }
      out.push(connection);
    }
    return out;
  },
});

// ---------------------------------------------------------------------------------------------
// Tunnels made by mining (docs/palace-behaviour.md §4.9 steps 1 and 3)

/**
 * Topic tunnels after a projects/extract mine: for the mined wing and every other wing of the
 * registry's `topics_by_wing` sharing at least `minCount` topics (case-insensitive), one tunnel
 * per shared topic between the rooms `topic:<Topic>`. Wing keys are slugged; the wing whose slug
 * sorts first is the source and supplies the topic's spelling.
 */
export async function buildTopicTunnels(ctx: Pick<GraphContext, 'graph' | 'now' | 'actor'>, wing: string, topicsByWing: Record<string, readonly string[]>,
  minCount = 1): Promise<TunnelRecord[]> {
  const mined = wingSlug(validateName('wing', wing));
  const threshold = Number.isInteger(minCount) && minCount >= 1 ? minCount : 1;
  const byWing = new Map<string, Map<string, string>>();
  for (const [rawWing, topics] of Object.entries(topicsByWing)) {
    const slug = wingSlug(rawWing);
    let spellings = byWing.get(slug);
    if (!spellings) byWing.set(slug, spellings = new Map());
    for (const topic of topics) {
      const t = typeof topic === 'string' ? topic.trim() : '';
      if (t !== '' && !spellings.has(t.toLowerCase())) spellings.set(t.toLowerCase(), t);
    }
  }
  const mine = byWing.get(mined);
  if (!mine || mine.size === 0) return [];
  const at = connectionTimestamp(nowOf(ctx));
  const writes: TunnelWrite[] = [];
  for (const other of [...byWing.keys()].sort()) {
    if (other === mined) continue;
    const theirs = byWing.get(other)!;
    const shared = [...mine.keys()].filter((k) => theirs.has(k)).sort();
    if (shared.length < threshold) continue;
    const [first, second] = mined < other ? [mined, other] : [other, mined];
    const spelling = first === mined ? mine : theirs;
    for (const key of shared) {
      const topic = spelling.get(key)!;
      const room = `topic:${topic}`;
      writes.push(tunnelWrite('topic', { wing: first, room }, { wing: second, room }, `shared topic: ${topic}`, at, ctx.actor));
    }
  }
  return writes.length === 0 ? [] : ctx.graph.tunnelUpsert(writes);
}

/**
 * Entity tunnels after a projects mine: an entity is in a wing when one of the wing's hallways
 * names it; for each entity of the mined wing and each other wing that has it, one tunnel
 * between the rooms `entity:<name>`, the wing whose slug sorts first as the source.
 */
export async function buildEntityTunnels(ctx: Pick<GraphContext, 'graph' | 'now' | 'actor'>, wing: string): Promise<TunnelRecord[]> {
  const mined = validateName('wing', wing);
  const entitiesByWing = new Map<string, Set<string>>();
  for (const h of await ctx.graph.hallwayList()) {
    let set = entitiesByWing.get(h.wing);
    if (!set) entitiesByWing.set(h.wing, set = new Set());
    set.add(h.entity_a).add(h.entity_b);
  }
  const mine = entitiesByWing.get(mined);
  if (!mine) return [];
  const others = [...entitiesByWing.keys()].filter((w) => w !== mined).sort((a, b) => (wingSlug(a) < wingSlug(b) ? -1 : wingSlug(a) > wingSlug(b) ? 1 : 0));
  const at = connectionTimestamp(nowOf(ctx));
  const writes: TunnelWrite[] = [];
  for (const entity of [...mine].sort()) {
    for (const other of others) {
      if (!entitiesByWing.get(other)!.has(entity)) continue;
      const room = `entity:${entity}`;
      const [first, second] = wingSlug(mined) <= wingSlug(other) ? [mined, other] : [other, mined];
      writes.push(tunnelWrite('entity', { wing: first, room }, { wing: second, room }, `shared entity: ${entity}`, at, ctx.actor));
    }
  }
  return writes.length === 0 ? [] : ctx.graph.tunnelUpsert(writes);
}
