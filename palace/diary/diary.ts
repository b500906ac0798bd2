/**
 * Agent diaries (docs/palace-behaviour.md §2.6, docs/tools.md §6): drawers in room `diary` of the agent's
 * wing; reads return one entry per write, newest first (docs/decisions.md A4).
 */
import { Type } from 'typebox';
import { filedAtNow } from '../../core/drawer.js';
import type { DrawerMeta } from '../../core/drawer.js';
import { PalaceError, invalidArgument } from '../../core/errors.js';
import { chunkRowId, diaryEntryId, ID_RECIPE } from '../../core/ids.js';
import { splitContent } from '../../core/chunking.js';
import { INPUT_FORMATS, NON_BLANK } from '../../core/schema.js';
import { codePointLength } from '../../core/text.js';
import { NAME_RULES, validateContent } from '../../core/validate.js';
import { agentDiaryWing, validateAgentName } from '../../core/agent-identity.js';
import { CHUNK_SIZE, nowOf } from '../context.js';
import { clampToSchema, defineOperation } from '../operation.js';

/** A NAME with a default: its rules are the palace-name format; empty means the default. */
const nameOrDefault = (description: string) => Type.Optional(Type.String({ description, format: INPUT_FORMATS.name }));

/** An empty topic or wing means its default; one of only spaces is refused as blank, as a NAME is. */
function nameOr<T>(field: string, value: string | undefined, fallback: T): string | T {
  if (value === undefined || value === '') return fallback;
  const v = value.trim();
  if (v === '') throw invalidArgument(field, 'non_empty_string', `${field} must be a non-empty string`);
  return v;
}

/** An agent name: a NAME (lowercased) or an OAuth identity `oauth:<issuer>#<subject>` (validateAgentName). */
const AGENT_NAME_RULES = [...NAME_RULES, 'oauth_identity', 'control_characters'] as const;

/** Appends one entry to an agent's diary: drawers in room `diary`, chunked like any drawer. */
export const diaryWriteOperation = defineOperation({
  name: 'diary_write',
  input: Type.Object({
    agent_name: Type.String({ description: 'Your agent name (case-insensitive).', pattern: NON_BLANK }),
    entry: Type.Optional(Type.String({ description: 'The diary text (AAAK recommended).', pattern: NON_BLANK })),
    topic: nameOrDefault('Topic tag (default "general").'),
    wing: nameOrDefault('Target wing (default wing_<agent_name>).'),
    content: Type.Optional(Type.String({ description: 'Alias of entry.' })),
  }, { additionalProperties: false }),
  output: Type.Object({
    success: Type.Literal(true),
    entry_id: Type.String(),
    agent: Type.String(),
    topic: Type.String(),
    timestamp: Type.String(),
    chunks: Type.Integer(),
    chunk_ids: Type.Optional(Type.Array(Type.String())),
  }),
  /** `entry` or its alias `content` is required; the entry is CONTENT (at most 100,000 characters, no NUL). */
  rules: [...AGENT_NAME_RULES, 'required', 'max_length', 'null_bytes'],
  context: (rt) => rt.drawerContext,
  async run(input, ctx) {
    const agent = validateAgentName('agent_name', input.agent_name);
    const rawEntry = input.entry ?? input.content;
    if (rawEntry === undefined) throw invalidArgument('entry', 'required', "Missing required parameter 'entry'");
    const entry = validateContent(rawEntry, 'entry');
    const topic = nameOr('topic', input.topic, 'general');
    const wing = nameOr('wing', input.wing, agentDiaryWing(agent));
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
  },
});

const DIARY_READ_INPUT = Type.Object({
  agent_name: Type.String({ description: 'Agent whose diary to read.', pattern: NON_BLANK }),
  last_n: Type.Optional(Type.Integer({ description: 'How many entries (1–100, clamped).', minimum: 1, maximum: 100, default: 10 })),
  wing: nameOrDefault('Only this wing.'),
}, { additionalProperties: false });
const DIARY_ENTRY = Type.Object({ date: Type.String(), timestamp: Type.String(), topic: Type.String(), content: Type.String() });

/** An agent's most recent entries, newest first, one per write (chunks joined). */
export const diaryReadOperation = defineOperation({
  name: 'diary_read',
  input: DIARY_READ_INPUT,
  output: Type.Union([
    Type.Object({ agent: Type.String(), entries: Type.Array(DIARY_ENTRY), total: Type.Integer(), showing: Type.Integer() }),
    Type.Object({ agent: Type.String(), entries: Type.Array(DIARY_ENTRY, { maxItems: 0 }), message: Type.String() }),
  ]),
  clamped: ['last_n'],
  rules: AGENT_NAME_RULES,
  context: (rt) => rt.drawerContext,
  async run(input, ctx) {
    const agent = validateAgentName('agent_name', input.agent_name);
    const wing = nameOr('wing', input.wing, undefined);
    const lastN = clampToSchema(DIARY_READ_INPUT.properties.last_n, input.last_n);
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
  },
});
