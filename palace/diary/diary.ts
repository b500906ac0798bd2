/**
 * Agent diaries (docs/palace-behaviour.md §2.6, docs/tools.md §6): drawers in room `diary` of the agent's
 * wing; reads return one entry per write, newest first (docs/decisions.md A4).
 */
import { filedAtNow } from '../../core/drawer.js';
import type { DrawerMeta } from '../../core/drawer.js';
import { PalaceError, invalidArgument } from '../../core/errors.js';
import { chunkRowId, diaryEntryId, ID_RECIPE } from '../../core/ids.js';
import { splitContent } from '../../core/chunking.js';
import { codePointLength } from '../../core/text.js';
import { validateContent, validateName } from '../../core/validate.js';
import { agentDiaryWing, validateAgentName } from '../../core/agent-identity.js';
import type { DrawerContext } from '../context.js';
import { CHUNK_SIZE, nowOf } from '../context.js';

export interface DiaryWriteInput {
  agent_name: unknown;
  entry?: unknown;
  content?: unknown;
  topic?: unknown;
  wing?: unknown;
}

export async function diaryWrite(ctx: DrawerContext, input: DiaryWriteInput) {
  const agent = validateAgentName('agent_name', input.agent_name);
  const rawEntry = input.entry === undefined || input.entry === null ? input.content : input.entry;
  if (rawEntry === undefined || rawEntry === null) throw invalidArgument('entry', 'required', "Missing required parameter 'entry'");
  const entry = validateContent(rawEntry, 'entry');
  const topic = input.topic === undefined || input.topic === null || input.topic === '' ? 'general' : validateName('topic', input.topic);
  const wing = input.wing === undefined || input.wing === null || input.wing === '' ? agentDiaryWing(agent) : validateName('wing', input.wing);
  const at = nowOf(ctx);
  const filedAt = filedAtNow(at);
  const entryId = diaryEntryId(wing, at, entry);

  const existing = await ctx.drawers.get([entryId, chunkRowId(entryId, 0)]);
  if (existing.length > 0) throw new PalaceError('already_exists', `diary entry id collision: ${entryId}`, { details: { entry_id: entryId } });

  const meta: DrawerMeta = {
    wing,
    room: 'diary',
    hall: 'hall_diary',
    topic,
    type: 'diary_entry',
    agent,
    source_file: '',
    added_by: agent,
    filed_at: filedAt,
    date: filedAt.slice(0, 10),
    chunk_index: 0,
    id_recipe: ID_RECIPE,
  };
  const pieces = codePointLength(entry) > CHUNK_SIZE ? splitContent(entry, CHUNK_SIZE, 0) : [entry];
  const vectors = await ctx.embedder.embed(pieces);
  const rows = pieces.length === 1
    ? [{ id: entryId, content: entry, meta, embedding: vectors[0]! }]
    : pieces.map((p, i) => ({ id: chunkRowId(entryId, i), content: p, meta: { ...meta, chunk_index: i, parent_entry_id: entryId, parent_drawer_id: entryId },
      embedding: vectors[i]! })
    );
  await ctx.drawers.upsert(rows);
  return {
    success: true as const,
    entry_id: entryId,
    agent,
    topic,
    timestamp: filedAt,
    chunks: rows.length,
    ...(rows.length > 1 ? { chunk_ids: rows.map((r) => r.id) } : {}),
  };
}

export async function diaryRead(ctx: DrawerContext, input: { agent_name: unknown; last_n?: unknown; wing?: unknown }) {
  const agent = validateAgentName('agent_name', input.agent_name);
  const wing = input.wing === undefined || input.wing === null || input.wing === '' ? undefined : validateName('wing', input.wing);
  const lastN = typeof input.last_n === 'number' && Number.isFinite(input.last_n) ? Math.min(100, Math.max(1, Math.trunc(input.last_n))) : 10;
  const filter = { wing, room: 'diary', meta: { agent } };
  const entries: { date: string; timestamp: string; topic: string; content: string }[] = [];
  const pageSize = 200;
  for (let offset = 0;; offset += pageSize) {
    const page = await ctx.drawers.list(filter, offset, pageSize);
    const groups = new Map<string, { meta: DrawerMeta; parts: { i: number; text: string }[] }>();
    for (const r of page.items) {
      const id = r.meta.parent_entry_id ?? r.id;
      const g = groups.get(id) ?? { meta: r.meta, parts: [] };
      g.parts.push({ i: r.meta.chunk_index, text: r.content });
      groups.set(id, g);
    }
    for (const g of groups.values()) {
      const m = g.meta;
      entries.push({ date: String(m.date ?? m.filed_at.slice(0, 10)), timestamp: m.filed_at, topic: String(m.topic ?? 'general'),
        content: g.parts.sort((a, b) => a.i - b.i).map((p) => p.text).join('') });
    }
    if (offset + pageSize >= page.total) break;
  }
  if (entries.length === 0) return { agent, entries: [], message: 'No diary entries yet.' };
  entries.sort((a, b) => (a.timestamp < b.timestamp ? 1 : a.timestamp > b.timestamp ? -1 : 0));
  const shown = entries.slice(0, lastN);
  return { agent, entries: shown, total: entries.length, showing: shown.length };
}
