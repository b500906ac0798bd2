/**
 * Palace write tools (docs/tools.md §3): add, checkpoint, delete, the three long-running jobs (mine,
 * delete_by_source, sync), and the two drawer reads documented beside them.
 */
import { checkpoint } from '../../palace/drawers/checkpoint.js';
import { addDrawerOperation, deleteDrawerOperation, getDrawerOperation, listDrawersOperation, updateDrawerOperation } from '../../palace/drawers/drawers.js';
import { toolOf } from '../bind.js';
import { deleteBySourceOperation, mineOperation, syncOperation } from '../../jobs/operations.js';
import { MINE_TOOL_FIELDS } from '../../jobs/requests.js';
import { arrayOf, input, output, shape, str, types } from '../schema.js';
import type { ToolDef } from '../types.js';

const { S, O } = types;

export const palaceWriteTools: ToolDef[] = [
  toolOf(addDrawerOperation, {
    description:
      'File verbatim content (exact words, never a summary) into a wing and room. The drawer id is derived from wing, room and content, so filing the same content twice is a no-op that returns reason "already_exists". Long content is stored as chunks under one logical id. Check for near-duplicates first with mempalace_check_duplicate, or use mempalace_checkpoint for a whole session.',
    guards: { mutating: true, vectorWrite: true, readOnlyRefused: true },
    idempotent: true,
    errorShape: 'success_false',
    agentFields: ['added_by'],
  }),
  {
    name: 'mempalace_checkpoint',
    description:
      'Save a whole session in one call: each item is checked for near-duplicates (dedup_threshold, default 0.9), the others are filed as drawers, then one diary entry is written. Returns added, duplicates, errors and the diary result; one bad item never aborts the batch.',
    inputSchema: input({
      items: { type: 'array', description: 'Verbatim items to file.',
        items: { type: 'object', properties: { wing: { type: 'string' }, room: { type: 'string' }, content: { type: 'string' } },
          required: ['wing', 'room', 'content'] } },
      diary: { type: 'object', description: 'Diary entry written after filing: { agent_name, entry (AAAK), topic, wing }; "content" is accepted for "entry".',
        properties: { agent_name: { type: 'string' }, entry: { type: 'string' }, content: { type: 'string' }, topic: { type: 'string' },
          wing: { type: 'string' } } },
      dedup_threshold: { type: 'number', description: 'Similarity (0–1) at which an item counts as a duplicate.', minimum: 0, maximum: 1, default: 0.9 },
      added_by: str('Who files these drawers (default: the diary agent, else "checkpoint").'),
    }, ['items']),
    outputSchema: output(shape({ added: arrayOf(O), duplicates: arrayOf(shape({ room: S, matches: arrayOf(O) })), errors: arrayOf(O) }, { diary: O })),
    guards: { mutating: true, vectorWrite: true, readOnlyRefused: true },
    errorShape: 'error',
    agentFields: ['added_by', 'diary.agent_name'],
    // Items are checked one by one by the handler so one malformed item never rejects the batch.
    advisory: ['items'],
    handler: (args, ctx) => checkpoint(ctx.runtime.drawerContext, args as { items: unknown }),
  },
  toolOf(deleteDrawerOperation, {
    description: 'Delete one drawer, irreversibly. A logical id deletes all its chunks; a chunk id deletes that row only. Returns the deleted row ids.',
    guards: { mutating: true, vectorWrite: true, readOnlyRefused: true },
    destructive: true,
    errorShape: 'success_false',
  }),
  toolOf(mineOperation, {
    description:
      'Mine a directory (or, in convos mode, one conversation file) into the palace: projects = code and docs, convos = chat transcripts, extract = office documents. Runs as a job: waits a bounded time and returns the miner\'s summary, or { status: "running", job_id, progress } if it is still going — call again for the same source to see its progress (the answer is an already-running error with the same job_id). Re-mining unchanged files is a no-op.',
    fields: MINE_TOOL_FIELDS,
    guards: { mutating: true, vectorWrite: true, readOnlyRefused: true, longRunning: true },
    idempotent: true,
    openWorld: true,
    errorShape: 'success_false',
    agentFields: ['agent'],
  }),
  toolOf(deleteBySourceOperation, {
    description:
      'Bulk-delete every drawer whose stored source_file equals one exact value (e.g. test data mined by mistake). Dry run by default: returns the match count and a sample of (wing, room); pass dry_run false to delete, irreversibly.',
    guards: { mutating: true, vectorWrite: true, readOnlyRefused: true },
    destructive: true,
    idempotent: true,
    errorShape: 'success_false',
  }),
  toolOf(syncOperation, {
    description:
      'Prune drawers whose source files were deleted, moved or gitignored. Dry run by default (reports what would go); apply true deletes and needs wing or project_dir. Only provably stale drawers are removed; anything unclear is listed as unresolved and kept. A source root that is no longer the filesystem it was mined from (an unmounted volume), or a sync that would delete most of a source, stops: guard.message says why, and apply then needs force true. Runs as a job like mempalace_mine.',
    guards: { mutating: true, vectorWrite: true, readOnlyRefused: true, longRunning: true },
    destructive: true,
    idempotent: true,
    errorShape: 'success_false',
  }),
  toolOf(getDrawerOperation, {
    description:
      'Fetch one drawer with its full content and metadata. content_sha256 is the token to pass as if_unchanged to mempalace_update_drawer for a check-and-set edit.',
    guards: {},
    errorShape: 'error',
  }),
  toolOf(listDrawersOperation, {
    description:
      'Page through drawers (one entry per logical drawer, ordered by id) with optional wing, room and filed-at window filters. Returns previews; fetch full text with mempalace_get_drawer.',
    guards: {},
    errorShape: 'error',
  }),
  toolOf(updateDrawerOperation, {
    description:
      "Change a drawer's content and/or move it to another wing/room; the id never changes. Pass if_unchanged (content_sha256 from mempalace_get_drawer) to refuse the write if someone changed the drawer since you read it — a refusal returns conflict: true and both digests.",
    guards: { mutating: true, vectorWrite: true, readOnlyRefused: true },
    idempotent: true,
    errorShape: 'success_false',
  }),
];
