/**
 * Filing an agent session's new exchanges (the agent hooks' auto-save). The hook decides what is
 * new; this files it: each exchange verbatim through the conversation miner's exchange chunking,
 * under ids keyed by (session, exchange position, slice), so filing the same exchange twice — a
 * retried queue job, a precompact after a stop — writes nothing new. Then one diary entry.
 */
import type { DrawerMeta, DrawerWrite } from '../../core/drawer.js';
import { filedAtNow } from '../../core/drawer.js';
import { chunkExchangeUnits } from '../../core/chat/exchange.js';
import type { Harness } from '../../core/chat/session.js';
import { ID_RECIPE, minedChunkId } from '../../core/ids.js';
import { validateName } from '../../core/validate.js';
import type { CheckpointInput } from '../drawers/checkpoint.js';
import { checkpoint } from '../drawers/checkpoint.js';
import type { DrawerContext } from '../context.js';
import { nowOf } from '../context.js';

export interface SessionSave {
  harness: Harness;
  sessionId: string;
  /** Written as `added_by` on every drawer. */
  agent: string;
  wing: string;
  room: string;
  /** The transcript's path on the host, recorded as `source_file`. */
  sourceFile: string;
  exchanges: { index: number; text: string }[];
}

/** What an auto-save job carries: the session's exchanges and a checkpoint (its diary entry). */
export interface AutoSave {
  session?: SessionSave;
  checkpoint: CheckpointInput;
}

export function sessionDrawers(save: SessionSave, filedAt: string): Omit<DrawerWrite, 'embedding'>[] {
  const wing = validateName('wing', save.wing);
  const room = validateName('room', save.room);
  const chunks = chunkExchangeUnits(save.exchanges.map((e) => e.text));
  return chunks.map((c) => {
    const exchange = save.exchanges[c.unit]!;
    const meta: DrawerMeta = {
      wing,
      room,
      source_file: save.sourceFile,
      added_by: save.agent,
      filed_at: filedAt,
      id_recipe: ID_RECIPE,
      chunk_index: c.chunkIndex,
      ingest_mode: 'convos',
      extract_mode: 'exchange',
      session_id: save.sessionId,
      exchange_index: exchange.index,
      harness: save.harness,
    };
    const id = minedChunkId({ wing, room, sourceIdentity: `${save.harness}:${save.sessionId}`, relativePath: `exchange/${exchange.index}`,
      chunkIndex: c.chunkIndex, mode: 'hook' });
    return { id, content: c.content, meta };
  });
}

/** Chunks of the first batch of a budgeted save: small, since it also measures the embedding rate. */
const FIRST_BATCH = 8;
/** Chunks embedded and written at once at most. */
const MAX_BATCH = 64;
/** Share of the time left that the next batch is sized to fill (the rate varies from batch to batch). */
const BUDGET_FILL = 0.8;

/**
 * A time budget for a save the host waits for (its hook timeout cuts it off otherwise): each
 * batch is sized from the embedding rate measured so far to end before `deadline` (epoch ms),
 * and none starts when not even one chunk fits. The first batch always runs, so every run files
 * something. `onProgress` hears, after each batch, the position of the first exchange not wholly
 * filed yet.
 */
export interface SaveBudget {
  deadline: number;
  onProgress?: (filedThrough: number) => Promise<void>;
}

export interface SessionSaveResult {
  filed: string[];
  already_filed: string[];
  /** Position of the first exchange not wholly filed (every exchange before it is in the palace). */
  filed_through: number;
  /** Every exchange of the save is filed. */
  complete: boolean;
}

const ID_PAGE = 1000;

async function storedIds(ctx: DrawerContext, ids: string[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (let i = 0; i < ids.length; i += ID_PAGE) for (const d of await ctx.drawers.get(ids.slice(i, i + ID_PAGE))) out.add(d.id);
  return out;
}

/**
 * Files the exchanges' chunks not filed yet, in order, batch by batch, within `budget` when one
 * is given; returns the ids written, the ones already there, and how far it got. What an earlier
 * run stored (even one cut off before it recorded its progress) is skipped without embedding, so
 * an exchange longer than one run can embed is filed over several runs.
 */
export async function fileSessionSave(ctx: DrawerContext, save: SessionSave, budget?: SaveBudget): Promise<SessionSaveResult> {
  const planned = sessionDrawers(save, filedAtNow(nowOf(ctx)));
  const existing = await storedIds(ctx, planned.map((d) => d.id));
  const todo = planned.filter((d) => !existing.has(d.id));
  const end = save.exchanges.length === 0 ? 0 : save.exchanges[save.exchanges.length - 1]!.index + 1;
  const through = (next: number) => (next < todo.length ? Number(todo[next]!.meta.exchange_index) : end);
  const result: SessionSaveResult = { filed: [], already_filed: [...existing], filed_through: through(0), complete: todo.length === 0 };
  let msPerChunk: number | undefined;
  for (let next = 0; next < todo.length;) {
    let size = MAX_BATCH;
    if (budget) {
      size = msPerChunk === undefined ? FIRST_BATCH : Math.min(MAX_BATCH, Math.floor(((budget.deadline - Date.now()) * BUDGET_FILL) / msPerChunk));
      if (size < 1) break;
    }
    const batch = todo.slice(next, next + size);
    const started = Date.now();
    const vectors = await ctx.embedder.embed(batch.map((d) => d.content));
    await ctx.drawers.upsert(batch.map((d, i) => ({ ...d, embedding: vectors[i]! })));
    msPerChunk = Math.max(1, Date.now() - started) / batch.length;
    next += batch.length;
    result.filed.push(...batch.map((d) => d.id));
    result.filed_through = through(next);
    result.complete = next === todo.length;
    await budget?.onProgress?.(result.filed_through);
  }
  return result;
}

/** The auto-save handler: inline in the embedded profile, on the trigger queue's worker otherwise. */
export async function runAutoSave(ctx: DrawerContext, job: AutoSave) {
  const session = job.session ? await fileSessionSave(ctx, job.session) : { filed: [], already_filed: [] };
  const checkpointed = await checkpoint(ctx, job.checkpoint);
  return { drawers_filed: session.filed.length, drawers_already_filed: session.already_filed.length, checkpoint: checkpointed };
}
