/**
 * System tools (docs/tools.md §7): the save hook's settings and acknowledgement, and reconnect.
 */
import { hookSettings, memoriesFiledAway } from '../../palace/system/system.js';
import { arrayOf, bool, input, output, shape, types } from '../schema.js';
import type { ToolDef } from '../types.js';

const { S, I, B, SN } = types;

export const systemTools: ToolDef[] = [
  {
    name: 'mempalace_hook_settings',
    description:
      'Read or change how the auto-save hook behaves: silent_save (save directly, without MCP clutter) and desktop_toast (a desktop notification on save). Call with no arguments to read.',
    inputSchema: input({
      silent_save: bool('true = save directly without MCP clutter; false = the blocking MCP path.'),
      desktop_toast: bool('true = show a desktop notification on save.'),
    }),
    outputSchema: output(shape({ success: { const: true }, settings: shape({ silent_save: B, desktop_toast: B }) }, { updated: arrayOf(S) })),
    guards: { readOnlyRefused: true },
    idempotent: true,
    errorShape: 'success_false',
    handler: (args, ctx) => hookSettings(ctx.home, args),
  },
  {
    name: 'mempalace_memories_filed_away',
    description:
      'Acknowledge the latest silent checkpoint written by the save hook: how many messages were tucked into drawers and when. The record is consumed, so a second call answers "quiet".',
    inputSchema: input(),
    outputSchema: output(shape({ status: { enum: ['quiet', 'ok', 'error'] }, message: S, count: I, timestamp: SN })),
    guards: { readOnlyRefused: true },
    destructive: true,
    errorShape: 'error',
    handler: (_args, ctx) => memoriesFiledAway(ctx.home),
  },
  {
    name: 'mempalace_reconnect',
    description:
      'Drop cached store handles and reopen the palace after another process changed it (or replaced the knowledge-graph or logstream files); re-runs the integrity probe. Returns the drawer count. It cannot reload code after an upgrade: restart the server for that.',
    inputSchema: input(),
    outputSchema: output(shape({ success: B, message: S })),
    guards: { integritySafe: true },
    swapsRuntime: true,
    errorShape: 'success_false',
    handler: (_args, ctx) => ctx.reconnect(),
  },
];
