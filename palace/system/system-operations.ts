/**
 * The system tools' operations (docs/tools.md §7): the save hook's settings and its
 * acknowledgement, which live in the caller's MemPalace home, and reconnect, which only a face
 * that owns its runtime can do.
 */
import { Type } from 'typebox';
import type { OperationCall } from '../operation-call.js';
import { defineOperation } from '../operation.js';
import { hookSettings, memoriesFiledAway } from './system.js';

const homeOf = (_rt: unknown, call: OperationCall) => call.home;

/** Reads the hook settings, or changes those given. */
export const hookSettingsOperation = defineOperation({
  name: 'hook_settings',
  input: Type.Object({
    silent_save: Type.Optional(Type.Boolean({ description: 'true = save directly without MCP clutter; false = the blocking MCP path.' })),
    desktop_toast: Type.Optional(Type.Boolean({ description: 'true = show a desktop notification on save.' })),
  }, { additionalProperties: false }),
  output: Type.Union([
    Type.Object({
      success: Type.Literal(true),
      settings: Type.Object({ silent_save: Type.Boolean(), desktop_toast: Type.Boolean() }),
      updated: Type.Optional(Type.Array(Type.String())),
    }),
    Type.Object({ success: Type.Literal(false), error: Type.String() }),
  ]),
  context: homeOf,
  run: (input, home) => hookSettings(home, input),
});

/** Consumes the save hook's latest record: a second call answers "quiet". */
export const memoriesFiledAwayOperation = defineOperation({
  name: 'memories_filed_away',
  input: Type.Object({}, { additionalProperties: false }),
  output: Type.Object({
    status: Type.Unsafe<'quiet' | 'ok' | 'error'>({ enum: ['quiet', 'ok', 'error'] }),
    message: Type.String(),
    count: Type.Integer(),
    timestamp: Type.Union([Type.String(), Type.Null()]),
  }),
  context: homeOf,
  run: (_input, home) => memoriesFiledAway(home),
});

/** Drops and reopens the store handles and re-runs the integrity probe. */
export const reconnectOperation = defineOperation({
  name: 'reconnect',
  input: Type.Object({}, { additionalProperties: false }),
  output: Type.Object({ success: Type.Boolean(), message: Type.String() }),
  context: (_rt, call) => call.reconnect,
  run: (_input, reconnect) => {
    if (!reconnect) throw new Error('reconnect: this face does not own its runtime');
    return reconnect();
  },
});
