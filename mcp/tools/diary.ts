/**
 * Agent diary tools (docs/tools.md §6), as bindings of the operations of palace/diary/diary.ts.
 */
import { diaryReadOperation, diaryWriteOperation } from '../../palace/diary/diary.js';
import { toolOf } from '../bind.js';
import type { ToolDef } from '../types.js';

export const diaryTools: ToolDef[] = [
  toolOf(diaryWriteOperation, {
    description:
      'Append an entry to your own diary (AAAK recommended): what happened this session, what you learned, what matters. Call it at the end of each session. Entries land in room "diary" of wing_<agent> unless you name a wing.',
    guards: { mutating: true, vectorWrite: true, readOnlyRefused: true },
    requiredAliases: { entry: 'content' },
    errorShape: 'success_false',
    agentFields: ['agent_name'],
  }),
  toolOf(diaryReadOperation, {
    description: "Read an agent's most recent diary entries, newest first (default 10, at most 100), from every wing it wrote to or from one wing.",
    guards: {},
    errorShape: 'error',
  }),
];
