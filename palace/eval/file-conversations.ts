/**
 * Filing a conversational set into a palace the way conversations are filed everywhere else: each
 * conversation in its own wing, each session cut into exchanges (two consecutive turns, each line
 * `Speaker: text`) chunked by the conversation miner's exchange rules, verbatim. A drawer records
 * its session, the session's date (as `filed_at` too, so date windows apply) and the turns it holds,
 * which is what session- and turn-level recall are measured on. Ids are deterministic, so filing
 * the same set again writes nothing new.
 */
import { chunkExchangeUnits } from '../../core/chat/exchange.js';
import type { DrawerWrite } from '../../core/drawer.js';
import { filedAtNow } from '../../core/drawer.js';
import { ID_RECIPE, minedChunkId } from '../../core/ids.js';
import { validateName } from '../../core/validate.js';
import type { DrawerContext } from '../context.js';
import { nowOf } from '../context.js';
import type { Conversation, Session } from './labelled-set.js';

export const CONVERSATION_ROOM = 'conversation';
const TURNS_PER_EXCHANGE = 2;
const WRITE_BATCH = 64;

/** The wing a conversation is filed in: its id with characters a wing name may not hold replaced. */
export function conversationWing(conversationId: string): string {
  const cleaned = conversationId.replace(/[^\p{L}\p{N}_ .'-]/gu, '_').replace(/\.{2,}/g, '_').replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}\p{M}]+$/gu, '');
  return validateName('conversations.id', `eval_${cleaned || 'conversation'}`.slice(0, 128));
}

function sessionFiledAt(session: Session, fallback: string): string {
  const ms = session.date === undefined ? Number.NaN : Date.parse(session.date);
  return Number.isFinite(ms) ? filedAtNow(new Date(ms)) : fallback;
}

/** The drawers of one conversation, without embeddings. */
export function conversationDrawers(conversation: Conversation, now: Date): Omit<DrawerWrite, 'embedding'>[] {
  const wing = conversationWing(conversation.id);
  const fallback = filedAtNow(now);
  return conversation.sessions.flatMap((session) => {
    const exchanges: { text: string; turns: string[] }[] = [];
    for (let i = 0; i < session.turns.length; i += TURNS_PER_EXCHANGE) {
      const turns = session.turns.slice(i, i + TURNS_PER_EXCHANGE);
      exchanges.push({ text: turns.map((t) => `${t.speaker}: ${t.text}`).join('\n'), turns: turns.map((t) => t.id) });
    }
    const filedAt = sessionFiledAt(session, fallback);
    return chunkExchangeUnits(exchanges.map((e) => e.text)).map((c) => ({
      id: minedChunkId({ wing, room: CONVERSATION_ROOM, sourceIdentity: `eval:${conversation.id}`, relativePath: `${session.id}/exchange/${c.unit}`,
        chunkIndex: c.chunkIndex, mode: 'eval' }),
      content: c.content,
      meta: {
        wing,
        room: CONVERSATION_ROOM,
        source_file: `${conversation.id}/${session.id}`,
        chunk_index: c.chunkIndex,
        added_by: 'eval',
        filed_at: filedAt,
        id_recipe: ID_RECIPE,
        ingest_mode: 'convos',
        extract_mode: 'exchange',
        session_id: session.id,
        ...(session.date === undefined ? {} : { session_date: session.date }),
        exchange_index: c.unit,
        turn_ids: exchanges[c.unit]!.turns.join(';'),
      },
    }));
  });
}

/** Files every conversation; `onProgress` hears drawers written so far and the total. */
export async function fileConversations(ctx: DrawerContext, conversations: readonly Conversation[],
  onProgress?: (done: number, total: number) => void): Promise<number> {
  const drawers = conversations.flatMap((c) => conversationDrawers(c, nowOf(ctx)));
  for (let i = 0; i < drawers.length; i += WRITE_BATCH) {
    const batch = drawers.slice(i, i + WRITE_BATCH);
    const vectors = await ctx.embedder.embed(batch.map((d) => d.content));
    await ctx.drawers.upsert(batch.map((d, k) => ({ ...d, embedding: vectors[k]! })));
    onProgress?.(Math.min(i + WRITE_BATCH, drawers.length), drawers.length);
  }
  return drawers.length;
}
