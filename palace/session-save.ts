/**
 * Filing an agent session's new exchanges (the agent hooks' auto-save). The hook decides what is
 * new; this files it: each exchange verbatim through the conversation miner's exchange chunking,
 * under ids keyed by (session, exchange position, slice), so filing the same exchange twice — a
 * retried queue job, a precompact after a stop — writes nothing new. Then one diary entry.
 */
import type { DrawerMeta, DrawerWrite } from '../core/drawer.js';
import { filedAtNow } from '../core/drawer.js';
import { chunkExchangeUnits } from '../core/chat/exchange.js';
import type { Harness } from '../core/chat/session.js';
import { ID_RECIPE, minedChunkId } from '../core/ids.js';
import { validateName } from '../core/validate.js';
import type { CheckpointInput } from './checkpoint.js';
import { checkpoint } from './checkpoint.js';
import type { DrawerContext } from './context.js';
import { nowOf } from './context.js';

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
      wing, room, source_file: save.sourceFile, added_by: save.agent, filed_at: filedAt, id_recipe: ID_RECIPE, chunk_index: c.chunkIndex,
      ingest_mode: 'convos', extract_mode: 'exchange', session_id: save.sessionId, exchange_index: exchange.index, harness: save.harness,
    };
    const id = minedChunkId({ wing, room, sourceIdentity: `${save.harness}:${save.sessionId}`, relativePath: `exchange/${exchange.index}`, chunkIndex: c.chunkIndex, mode: 'hook' });
    return { id, content: c.content, meta };
  });
}

/** Files the exchanges not filed yet; returns the ids written and the ones already there. */
export async function fileSessionSave(ctx: DrawerContext, save: SessionSave): Promise<{ filed: string[]; already_filed: string[] }> {
  const planned = sessionDrawers(save, filedAtNow(nowOf(ctx)));
  if (planned.length === 0) return { filed: [], already_filed: [] };
  const existing = new Set((await ctx.drawers.get(planned.map((d) => d.id))).map((d) => d.id));
  const fresh = planned.filter((d) => !existing.has(d.id));
  const vectors = await ctx.embedder.embed(fresh.map((d) => d.content));
  if (fresh.length > 0) await ctx.drawers.upsert(fresh.map((d, i) => ({ ...d, embedding: vectors[i]! })));
  return { filed: fresh.map((d) => d.id), already_filed: [...existing] };
}

/** The auto-save handler: inline in the embedded profile, on the trigger queue's worker otherwise. */
export async function runAutoSave(ctx: DrawerContext, job: AutoSave) {
  const session = job.session ? await fileSessionSave(ctx, job.session) : { filed: [], already_filed: [] };
  const checkpointed = await checkpoint(ctx, job.checkpoint);
  return { drawers_filed: session.filed.length, drawers_already_filed: session.already_filed.length, checkpoint: checkpointed };
}
