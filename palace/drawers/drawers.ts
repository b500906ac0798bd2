/**
 * Drawer reads and writes of the tool contract (docs/tools.md §2.6, §3.1, §3.3, §3.7–3.9): add with
 * exact-content idempotency, logical resolution of chunked drawers, check-and-set updates.
 */
import path from 'node:path';
import type { Drawer, DrawerMeta, DrawerWrite } from '../../core/drawer.js';
import { filedAtNow, logicalDrawerId } from '../../core/drawer.js';
import { PalaceError, invalidArgument, notFound } from '../../core/errors.js';
import { addDrawerId, chunkRowId, ID_RECIPE } from '../../core/ids.js';
import { splitContent } from '../../core/chunking.js';
import { codePointLength, codePointSlice, sha256Hex, stripLoneSurrogates } from '../../core/text.js';
import { NAME_RULES, validateContent, validateDateWindow } from '../../core/validate.js';
import type { Static } from 'typebox';
import { Type } from 'typebox';
import { INPUT_FORMATS, NON_BLANK } from '../../core/schema.js';
import type { DrawerContext } from '../context.js';
import { CHUNK_SIZE, nowOf } from '../context.js';
import { clampToSchema, defineOperation } from '../operation.js';

export interface LogicalDrawer {
  id: string;
  rows: Drawer[];
  content: string;
  meta: DrawerMeta;
  chunked: boolean;
}

function preview(text: string, n = 200): string {
  return codePointLength(text) > n ? `${codePointSlice(text, 0, n)}...` : text;
}

/** Metadata as returned to callers: `source_file` reduced to its basename (docs/tools.md §3.7). */
function publicMeta(meta: DrawerMeta): Record<string, unknown> {
  const out: Record<string, unknown> = { ...meta };
  if (typeof meta.source_file === 'string' && meta.source_file !== '') out.source_file = path.basename(meta.source_file);
  return out;
}

function group(rows: Drawer[]): LogicalDrawer[] {
  const byId = new Map<string, Drawer[]>();
  for (const r of rows) {
    const id = logicalDrawerId(r);
    const list = byId.get(id) ?? [];
    list.push(r);
    byId.set(id, list);
  }
  return [...byId.entries()].map(([id, list]) => {
    const chunks = list.filter((r) => r.id !== id);
    // A legacy single row sharing the logical id is hidden behind its chunk group (docs/tools.md §3.8).
    const parts = (chunks.length > 0 ? chunks : list).sort((a, b) => a.meta.chunk_index - b.meta.chunk_index || (a.id < b.id ? -1 : 1));
    return { id, rows: parts, content: parts.map((r) => r.content).join(''), meta: parts[0]!.meta, chunked: chunks.length > 0 };
  });
}

/** Resolve a physical row id or a logical id (docs/tools.md §0.4). */
export async function resolveDrawer(ctx: DrawerContext, id: string): Promise<LogicalDrawer | undefined> {
  const [row] = await ctx.drawers.get([id]);
  if (row) {
    return { id: row.id, rows: [row], content: row.content, meta: row.meta, chunked: false };
  }
  const page = await ctx.drawers.list({ parentId: id }, 0, 1);
  return group(page.items).find((g) => g.id === id);
}

/** Rows for `content` under `logicalId`: one row, or chunk rows when longer than chunk_size. */
async function buildRows(ctx: DrawerContext, logicalId: string, content: string, meta: DrawerMeta): Promise<DrawerWrite[]> {
  const pieces = codePointLength(content) > CHUNK_SIZE ? splitContent(content, CHUNK_SIZE, 0) : [content];
  const vectors = await ctx.embedder.embed(pieces);
  if (pieces.length === 1) return [{ id: logicalId, content, meta: { ...meta, chunk_index: 0 }, embedding: vectors[0]! }];
  return pieces.map((piece, i) => ({
    id: chunkRowId(logicalId, i),
    content: piece,
    meta: { ...meta, chunk_index: i, parent_drawer_id: logicalId },
    embedding: vectors[i]!,
  }));
}

/** What one drawer is filed from, its rules already checked (`addDrawerOperation`'s input). */
export interface AddDrawerInput {
  wing: string;
  room: string;
  content: string;
  source_file?: string | undefined;
  added_by?: string | undefined;
}

/** A palace name a write requires: non-blank, and the name rules (core/validate.ts). */
const requiredName = (description: string) => Type.String({ description, pattern: NON_BLANK, format: INPUT_FORMATS.name });

export const ADD_DRAWER_INPUT = Type.Object({
  wing: requiredName('Wing (project or person).'),
  room: requiredName('Room (aspect, e.g. backend, decisions).'),
  content: Type.String({ description: 'The exact text to store, up to 100000 characters.', pattern: NON_BLANK }),
  source_file: Type.Optional(Type.String({ description: 'Where the content came from.' })),
  added_by: Type.Optional(Type.String({ description: 'Who files it (default "mcp").' })),
}, { additionalProperties: false });

/** Present on a drawer stored in chunks: how many, and their row ids. */
const CHUNKED = { chunks: Type.Optional(Type.Integer()), chunk_ids: Type.Optional(Type.Array(Type.String())) };

/**
 * Files one drawer whose input has passed ADD_DRAWER_INPUT; the content's length and null-byte
 * rules are checked here, as JSON Schema cannot count them the way the contract does.
 */
export async function addDrawer(ctx: DrawerContext, input: AddDrawerInput, extraMeta: Partial<DrawerMeta> = {}) {
  const wing = input.wing.trim();
  const room = input.room.trim();
  const content = validateContent(input.content);
  const sourceFile = stripLoneSurrogates(input.source_file ?? '');
  const addedBy = input.added_by !== undefined && input.added_by.trim() !== '' ? stripLoneSurrogates(input.added_by) : 'mcp';
  const id = addDrawerId(wing, room, content);

  const probe = [id, chunkRowId(id, 0)];
  const existing = await ctx.drawers.get(probe);
  if (existing.length > 0) return { success: true as const, reason: 'already_exists' as const, drawer_id: id };

  const meta: DrawerMeta = { wing, room, source_file: sourceFile, added_by: addedBy, filed_at: filedAtNow(nowOf(ctx)), id_recipe: ID_RECIPE, chunk_index: 0,
    ...extraMeta };
  const rows = await buildRows(ctx, id, content, meta);
  await ctx.drawers.upsert(rows);
  const last = rows[rows.length - 1]!;
  const [readBack] = await ctx.drawers.get([last.id]);
  if (!readBack) throw new PalaceError('internal', `write acknowledged but not readable: ${last.id}`);
  if (rows.length === 1) return { success: true as const, drawer_id: id, wing, room, chunks: 1 };
  return { success: true as const, drawer_id: id, wing, room, chunks: rows.length, chunk_ids: rows.map((r) => r.id) };
}

/** Files verbatim content; the id is derived from wing, room and content, so filing it twice is a no-op. */
export const addDrawerOperation = defineOperation({
  name: 'add_drawer',
  input: ADD_DRAWER_INPUT,
  output: Type.Object({
    success: Type.Literal(true),
    drawer_id: Type.String(),
    wing: Type.Optional(Type.String()),
    room: Type.Optional(Type.String()),
    ...CHUNKED,
    reason: Type.Optional(Type.Literal('already_exists')),
  }),
  rules: NAME_RULES,
  context: (rt) => rt.drawerContext,
  run: (input, ctx) => addDrawer(ctx, input),
});

/** Before filing: the nearest drawers at or above a similarity threshold. */
export const checkDuplicateOperation = defineOperation({
  name: 'check_duplicate',
  input: Type.Object({
    content: Type.String({ description: 'Content to check.', pattern: NON_BLANK }),
    threshold: Type.Optional(Type.Number({ description: 'Minimum similarity (0–1) to count as a duplicate.', minimum: 0, maximum: 1, default: 0.9 })),
  }, { additionalProperties: false }),
  output: Type.Object({
    is_duplicate: Type.Boolean(),
    matches: Type.Array(
      Type.Object({ id: Type.String(), wing: Type.String(), room: Type.String(), similarity: Type.Number(),
        content: Type.String({ description: 'A preview of the drawer.' }) }),
    ),
  }),
  context: (rt) => rt.drawerContext,
  async run(input, ctx) {
    const threshold = input.threshold ?? 0.9;
    const [vector] = await ctx.embedder.embed([stripLoneSurrogates(input.content)]);
    const hits = await ctx.drawers.knn(vector!, 5, {});
    const matches = hits
      .map((h) => ({ id: h.drawer.id, wing: h.drawer.meta.wing || '?', room: h.drawer.meta.room || '?',
        similarity: Math.round(Math.max(0, 1 - h.distance) * 1000) / 1000, content: preview(h.drawer.content) })
      )
      .filter((m) => m.similarity >= threshold);
    return { is_duplicate: matches.length > 0, matches };
  },
});

const DRAWER_ID_INPUT = Type.Object({ drawer_id: Type.String({ description: 'Logical or physical drawer id.', pattern: NON_BLANK }) }, {
  additionalProperties: false,
});
/** A drawer's public metadata: a free-form object (what the miner or writer recorded). */
const DRAWER_METADATA = Type.Unsafe<Record<string, unknown>>({ type: 'object' });

/** One drawer with its full content and metadata; `content_sha256` is the check-and-set token of an update. */
export const getDrawerOperation = defineOperation({
  name: 'get_drawer',
  input: DRAWER_ID_INPUT,
  output: Type.Object({
    drawer_id: Type.String(),
    content: Type.String(),
    content_sha256: Type.String(),
    wing: Type.String(),
    room: Type.String(),
    metadata: DRAWER_METADATA,
    ...CHUNKED,
  }),
  context: (rt) => rt.drawerContext,
  async run(input, ctx) {
    const id = input.drawer_id.trim();
    const d = await resolveDrawer(ctx, id);
    if (!d) throw notFound('Drawer', id);
    const metadata = publicMeta(d.meta);
    const out = { drawer_id: d.id, content: d.content, content_sha256: sha256Hex(d.content), wing: d.meta.wing ?? '', room: d.meta.room ?? '', metadata };
    if (!d.chunked) return out;
    const chunkIds = d.rows.map((r) => r.id);
    metadata.chunks = d.rows.length;
    metadata.chunk_ids = chunkIds;
    return { ...out, chunks: d.rows.length, chunk_ids: chunkIds };
  },
});

const LIST_DRAWERS_INPUT = Type.Object({
  wing: Type.Optional(Type.String({ description: 'Only this wing.', format: INPUT_FORMATS.name })),
  room: Type.Optional(Type.String({ description: 'Only this room.', format: INPUT_FORMATS.name })),
  since: Type.Optional(Type.String({ description: 'Filed on or after this ISO date/datetime.', format: INPUT_FORMATS.dateBound })),
  before: Type.Optional(Type.String({ description: 'Filed strictly before this ISO date/datetime.', format: INPUT_FORMATS.dateBound })),
  limit: Type.Optional(Type.Integer({ description: 'Page size (1–100, clamped).', minimum: 1, maximum: 100, default: 20 })),
  offset: Type.Optional(Type.Integer({ description: 'Page start (≥ 0; negatives clamped to 0).', minimum: 0, default: 0 })),
}, { additionalProperties: false });

/** A page of logical drawers ordered by id, with previews. */
export const listDrawersOperation = defineOperation({
  name: 'list_drawers',
  input: LIST_DRAWERS_INPUT,
  output: Type.Object({
    drawers: Type.Array(
      Type.Object({ drawer_id: Type.String(), wing: Type.String(), room: Type.String(), content_preview: Type.String(), metadata: DRAWER_METADATA,
        ...CHUNKED }),
    ),
    total: Type.Integer(),
    count: Type.Integer(),
    offset: Type.Integer(),
    limit: Type.Integer(),
  }),
  clamped: ['limit', 'offset'],
  rules: [...NAME_RULES, 'iso_date_or_datetime', 'window_order'],
  context: (rt) => rt.drawerContext,
  async run(input, ctx) {
    const wing = input.wing?.trim() || undefined;
    const room = input.room?.trim() || undefined;
    const window = validateDateWindow(input.since, input.before);
    const limit = clampToSchema(LIST_DRAWERS_INPUT.properties.limit, input.limit);
    const offset = clampToSchema(LIST_DRAWERS_INPUT.properties.offset, input.offset);
    const page = await ctx.drawers.list({ wing, room, since: window.since, before: window.before }, offset, limit);
    const drawers = group(page.items).sort((a, b) => (a.id < b.id ? -1 : 1)).map((d) => ({
      drawer_id: d.id,
      wing: d.meta.wing,
      room: d.meta.room,
      content_preview: preview(d.content),
      metadata: publicMeta(d.meta),
      ...(d.chunked ? { chunks: d.rows.length, chunk_ids: d.rows.map((r) => r.id) } : {}),
    }));
    return { drawers, total: page.total, count: drawers.length, offset, limit };
  },
});

/** Deletes one drawer: a logical id all its chunks, a chunk id that row only. */
export const deleteDrawerOperation = defineOperation({
  name: 'delete_drawer',
  input: DRAWER_ID_INPUT,
  output: Type.Object({ success: Type.Literal(true), drawer_id: Type.String(), deleted_ids: Type.Array(Type.String()), chunks_deleted: Type.Integer() }),
  context: (rt) => rt.drawerContext,
  async run(input, ctx) {
    const id = input.drawer_id.trim();
    const d = await resolveDrawer(ctx, id);
    if (!d) throw notFound('Drawer', id);
    const ids = d.rows.map((r) => r.id);
    await ctx.drawers.delete(ids);
    return { success: true as const, drawer_id: d.id, deleted_ids: ids, chunks_deleted: ids.length };
  },
});

/** A name a write may change: absent keeps it; when given, non-blank and the name rules. */
const UPDATE_DRAWER_INPUT = Type.Object({
  drawer_id: Type.String({ description: 'Logical or physical drawer id.', pattern: NON_BLANK }),
  content: Type.Optional(Type.String({ description: 'New content (omit to keep).', pattern: NON_BLANK })),
  wing: Type.Optional(requiredName('New wing (omit to keep).')),
  room: Type.Optional(requiredName('New room (omit to keep).')),
  if_unchanged: Type.Optional(Type.String({ description: 'Full 64-hex content_sha256 from mempalace_get_drawer.' })),
}, { additionalProperties: false });

/**
 * Changes a drawer's content and/or moves it; the id never changes. `if_unchanged` makes it a
 * check-and-set: a drawer changed since it was read is refused with both digests.
 */
export const updateDrawerOperation = defineOperation({
  name: 'update_drawer',
  input: UPDATE_DRAWER_INPUT,
  output: Type.Union([
    Type.Object({ success: Type.Literal(true), drawer_id: Type.String(), noop: Type.Optional(Type.Boolean()), wing: Type.Optional(Type.String()),
      room: Type.Optional(Type.String()), ...CHUNKED }),
    Type.Object({ success: Type.Literal(false), conflict: Type.Literal(true), truncated_token: Type.Boolean(), drawer_id: Type.String(),
      expected_sha256: Type.String(), actual_sha256: Type.String(), error: Type.String() }),
  ]),
  rules: [...NAME_RULES, 'sha256_hex'],
  context: (rt) => rt.drawerContext,
  run: (input, ctx) => updateDrawer(ctx, input),
});

async function updateDrawer(ctx: DrawerContext, input: Static<typeof UPDATE_DRAWER_INPUT>) {
  const id = input.drawer_id.trim();
  const content = input.content === undefined ? undefined : validateContent(input.content);
  const wing = input.wing?.trim();
  const room = input.room?.trim();
  let token: string | undefined;
  if (input.if_unchanged !== undefined) {
    if (!/^[0-9a-f]{1,64}$/i.test(input.if_unchanged.trim())) {
      throw invalidArgument('if_unchanged', 'sha256_hex', 'if_unchanged must be the hex content_sha256 returned by get_drawer');
    }
    token = input.if_unchanged.trim().toLowerCase();
  }
  if (content === undefined && wing === undefined && room === undefined) return { success: true as const, drawer_id: id, noop: true as const };
  const d = await resolveDrawer(ctx, id);
  if (!d) throw notFound('Drawer', id);
  const actual = sha256Hex(d.content);
  if (token !== undefined && token !== actual) {
    const truncated = token.length < 64 && actual.startsWith(token);
    return {
      success: false as const,
      conflict: true as const,
      truncated_token: truncated,
      drawer_id: d.id,
      expected_sha256: token,
      actual_sha256: actual,
      error: truncated
        ? 'if_unchanged is a shortened token: pass the full 64-character content_sha256 from get_drawer'
        : 'drawer changed since it was read: re-read it with get_drawer and re-apply the change',
    };
  }
  const sameName = (a: string | undefined, b: string) => a === undefined || a.toLowerCase() === b.toLowerCase();
  const newWing = sameName(wing, d.meta.wing) ? d.meta.wing : wing!;
  const newRoom = sameName(room, d.meta.room) ? d.meta.room : room!;
  const newContent = content ?? d.content;
  // Who made it stays in added_by/filed_at; who changed it last, and when, beside them (issue 28).
  // Without a call's actor (an operation run outside a face) who changed it is unknown, not the filer.
  const meta: DrawerMeta = { ...d.meta, wing: newWing, room: newRoom, updated_at: filedAtNow(nowOf(ctx)) };
  if (ctx.actor === undefined) delete meta.updated_by;
  else meta.updated_by = ctx.actor;
  delete meta.parent_drawer_id;
  const rows = await buildRows(ctx, d.id, newContent, meta);
  const stale = d.rows.map((r) => r.id).filter((rid) => !rows.some((r) => r.id === rid));
  await ctx.drawers.upsert(rows);
  if (stale.length > 0) await ctx.drawers.delete(stale);
  if (rows.length === 1) return { success: true as const, drawer_id: d.id, wing: newWing, room: newRoom };
  return { success: true as const, drawer_id: d.id, wing: newWing, room: newRoom, chunks: rows.length, chunk_ids: rows.map((r) => r.id) };
}
