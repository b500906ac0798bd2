/**
 * System tools (docs/tools.md §7): the save hook's settings and acknowledgement, and reconnect,
 * bound to their operations (palace/system/system-operations.ts).
 */
import { hookSettingsOperation, memoriesFiledAwayOperation, reconnectOperation } from '../../palace/system/system-operations.js';
import { toolOf } from '../bind.js';
import type { ToolDef } from '../types.js';

export const systemTools: ToolDef[] = [
  toolOf(hookSettingsOperation, {
    description:
      'Read or change how the auto-save hook behaves: silent_save (save directly, without MCP clutter) and desktop_toast (a desktop notification on save). Call with no arguments to read.',
    guards: { readOnlyRefused: true },
    idempotent: true,
    errorShape: 'success_false',
  }),
  toolOf(memoriesFiledAwayOperation, {
    description:
      'Acknowledge the latest silent checkpoint written by the save hook: how many messages were tucked into drawers and when. The record is consumed, so a second call answers "quiet".',
    guards: { readOnlyRefused: true },
    destructive: true,
    errorShape: 'error',
  }),
  toolOf(reconnectOperation, {
    description:
      'Drop cached store handles and reopen the palace after another process changed it (or replaced the knowledge-graph or logstream files); re-runs the integrity probe. Returns the drawer count. It cannot reload code after an upgrade: restart the server for that.',
    guards: { integritySafe: true },
    swapsRuntime: true,
    errorShape: 'success_false',
  }),
];
