/**
 * One conversation file from bytes to drawer-ready chunks (docs/palace-behaviour.md §5.2–§5.8), without I/O: the
 * miner reads the file, calls this, and either writes the chunks or records the skip reason in
 * the file's mining state.
 */
import { isPalaceError } from '../errors.js';
import { codePointLength, strip } from '../text.js';
import { chunkExchanges } from './exchange.js';
import { extractGeneralMemories } from './general.js';
import { normaliseConversation } from './normalise.js';
import { conversationRoom } from './room.js';
import type { ChatFormat, ChunkLimits, NormaliseNote } from './types.js';
import { DEFAULT_CONVERSATION_LIMITS } from './types.js';

export type ExtractMode = 'exchange' | 'general';

export interface RoomedChunk {
  content: string;
  chunkIndex: number;
  room: string;
}

/** Why a conversation file produced no drawers (docs/palace-behaviour.md §5.8); the miner records it and goes on. */
export type ConversationSkipReason = 'too_large' | 'too_short' | 'no_chunks';

export type ConversationResult =
  | { status: 'ok'; format: ChatFormat; notes: NormaliseNote[]; chunks: RoomedChunk[] }
  | { status: 'skipped'; reason: ConversationSkipReason; format?: ChatFormat; notes: NormaliseNote[]; message: string };

export function chunkConversation(
  input: Uint8Array | string,
  fileName: string,
  extract: ExtractMode = 'exchange',
  limits: ChunkLimits = DEFAULT_CONVERSATION_LIMITS,
): ConversationResult {
  let normalised;
  try {
    normalised = normaliseConversation(input, fileName);
  } catch (e) {
    if (isPalaceError(e) && e.code === 'too_large') return { status: 'skipped', reason: 'too_large', notes: [], message: e.message };
    throw e;
  }
  const { format, transcript, notes } = normalised;
  if (codePointLength(strip(transcript)) < limits.minChunkSize) {
    return { status: 'skipped', reason: 'too_short', format, notes, message: `content is shorter than ${limits.minChunkSize} characters` };
  }
  let chunks: RoomedChunk[];
  if (extract === 'general') {
    chunks = extractGeneralMemories(transcript, limits);
  } else {
    const room = conversationRoom(transcript);
    chunks = chunkExchanges(transcript, limits).map((c) => ({ ...c, room }));
  }
  if (chunks.length === 0) return { status: 'skipped', reason: 'no_chunks', format, notes, message: 'no chunk reached the minimum size' };
  return { status: 'ok', format, notes, chunks };
}
