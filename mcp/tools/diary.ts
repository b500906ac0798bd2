/**
 * Agent diary tools (docs/tools.md §6).
 */
import { diaryRead, diaryWrite } from '../../palace/diary/diary.js';
import { arrayOf, input, int, output, shape, str, types } from '../schema.js';
import type { ToolDef } from '../types.js';

const { S, I } = types;

export const diaryTools: ToolDef[] = [
  {
    name: 'mempalace_diary_write',
    description:
      'Append an entry to your own diary (AAAK recommended): what happened this session, what you learned, what matters. Call it at the end of each session. Entries land in room "diary" of wing_<agent> unless you name a wing.',
    inputSchema: input({
      agent_name: str('Your agent name (case-insensitive).'),
      entry: str('The diary text (AAAK recommended).'),
      topic: str('Topic tag (default "general").'),
      wing: str('Target wing (default wing_<agent_name>).'),
      content: str('Alias of entry.'),
    }, ['agent_name']),
    outputSchema: output(shape({ success: { const: true }, entry_id: S, agent: S, topic: S, timestamp: S, chunks: I }, { chunk_ids: arrayOf(S) })),
    guards: { mutating: true, vectorWrite: true, readOnlyRefused: true },
    requiredAliases: { entry: 'content' },
    errorShape: 'success_false',
    agentFields: ['agent_name'],
    handler: (args, ctx) => diaryWrite(ctx.runtime.drawerContext, args as { agent_name: unknown }),
  },
  {
    name: 'mempalace_diary_read',
    description: "Read an agent's most recent diary entries, newest first (default 10, at most 100), from every wing it wrote to or from one wing.",
    inputSchema: input({
      agent_name: str('Agent whose diary to read.'),
      last_n: int('How many entries (1–100, clamped).', { minimum: 1, maximum: 100, default: 10 }),
      wing: str('Only this wing.'),
    }, ['agent_name']),
    outputSchema: output(
      shape({ agent: S, entries: arrayOf(shape({ date: S, timestamp: S, topic: S, content: S })), total: I, showing: I }),
      shape({ agent: S, entries: { type: 'array', maxItems: 0 }, message: S }),
    ),
    guards: {},
    errorShape: 'error',
    advisory: ['last_n'],
    handler: (args, ctx) => diaryRead(ctx.runtime.drawerContext, args as { agent_name: unknown }),
  },
];
