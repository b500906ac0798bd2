/**
 * A whole session in one call (docs/tools.md §3.2): each item is checked for near-duplicates, the
 * rest are filed with add_drawer semantics, then one diary entry is written. One bad item never
 * aborts the batch; its problem is reported under `errors`.
 */
import { isPalaceError } from '../../core/errors.js';
import type { DrawerContext } from '../context.js';
import { diaryWriteOperation } from '../diary/diary.js';
import { addDrawer, addDrawerOperation, checkDuplicateOperation } from './drawers.js';
import { invoke, parseOperationInput } from '../operation.js';

export interface CheckpointInput {
  items: unknown;
  diary?: unknown;
  dedup_threshold?: unknown;
  added_by?: unknown;
}

type Added = Awaited<ReturnType<typeof addDrawer>>;
type Duplicate = { room: string; matches: Awaited<ReturnType<typeof checkDuplicateOperation.run>>['matches'] };
type ItemError = { item: unknown; error: string } | { diary: unknown; error: string } | { success: false; error: string };

const isNonEmptyString = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export async function checkpoint(ctx: DrawerContext, input: CheckpointInput) {
  let threshold = 0.9;
  if (input.dedup_threshold !== undefined && input.dedup_threshold !== null) {
    if (typeof input.dedup_threshold !== 'number' || !Number.isFinite(input.dedup_threshold)) return { error: 'dedup_threshold must be a number' };
    threshold = input.dedup_threshold;
  }
  if (!Array.isArray(input.items)) return { error: 'items must be a list of {wing, room, content} objects' };

  const diary = input.diary;
  const diaryAgent = isObject(diary) && isNonEmptyString(diary.agent_name) ? diary.agent_name : undefined;
  const addedBy = isNonEmptyString(input.added_by) ? input.added_by : diaryAgent ?? 'checkpoint';

  const added: Added[] = [];
  const duplicates: Duplicate[] = [];
  const errors: ItemError[] = [];
  for (const item of input.items) {
    if (!isObject(item)) {
      errors.push({ item, error: 'item must be an object' });
      continue;
    }
    if (!isNonEmptyString(item.wing) || !isNonEmptyString(item.room) || !isNonEmptyString(item.content)) {
      errors.push({ item, error: 'wing, room, content must be non-empty strings' });
      continue;
    }
    try {
      const dup = await checkDuplicateOperation.run({ content: item.content, threshold }, ctx, undefined);
      if (dup.is_duplicate) {
        duplicates.push({ room: item.room, matches: dup.matches });
        continue;
      }
    } catch {
      // A failed duplicate check still files the item: exact-ID idempotency guards repeats.
    }
    try {
      // Each item is held to add_drawer's own input rules, so a bad one is reported, never filed.
      const one = parseOperationInput(addDrawerOperation, { wing: item.wing, room: item.room, content: item.content, added_by: addedBy });
      added.push(await addDrawer(ctx, one));
    } catch (e) {
      if (!isPalaceError(e) || e.code === 'internal') throw e;
      errors.push({ success: false, error: e.message });
    }
  }

  const out: { added: Added[]; duplicates: Duplicate[]; errors: ItemError[]; diary?: unknown } = { added, duplicates, errors };
  if (diary === undefined || diary === null) return out;
  if (!isObject(diary)) {
    errors.push({ diary, error: 'diary must be an object' });
    return out;
  }
  const entry = diary.entry !== undefined && diary.entry !== null ? diary.entry : diary.content;
  if (!isNonEmptyString(entry)) {
    errors.push({ diary, error: 'diary entry must be a non-empty string' });
    return out;
  }
  try {
    out.diary = await invoke(diaryWriteOperation, {
      agent_name: diaryAgent ?? 'cursor-ide',
      entry,
      topic: isNonEmptyString(diary.topic) ? diary.topic : 'session-checkpoint',
      wing: typeof diary.wing === 'string' ? diary.wing : '',
    }, ctx, undefined);
  } catch (e) {
    if (!isPalaceError(e) || e.code === 'internal') throw e;
    out.diary = { success: false, error: messageOf(e) };
  }
  return out;
}
