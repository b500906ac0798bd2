/** Shared shapes of the conversation side of mining (docs/palace-behaviour.md §5). */

export type ChatRole = 'user' | 'assistant';

/** One turn of a conversation after a format's normaliser has read it. */
export interface ChatMessage {
  role: ChatRole;
  text: string;
}

/** Every input shape `normaliseConversation` recognises, in detection order (docs/palace-behaviour.md §5.2). */
export type ChatFormat =
  | 'empty'
  | 'quoted-transcript'
  | 'claude-code-jsonl'
  | 'codex-jsonl'
  | 'gemini-jsonl'
  | 'claude-ai-json'
  | 'chatgpt-json'
  | 'slack-json'
  | 'plain-text';

/**
 * Why a file was read with less than full fidelity. The text is still filed; the reasons are
 * reported so a miner can log them.
 */
export type NormaliseNote =
  /** The bytes were not valid UTF-8; invalid sequences became U+FFFD. */
  | 'invalid-utf8-replaced'
  /** The content looked like JSON/JSONL but no chat parser matched; filed as plain text. */
  | 'json-not-recognised';

export interface NormalisedConversation {
  format: ChatFormat;
  /** The transcript (docs/palace-behaviour.md §5.4), or the raw text for `plain-text`/`quoted-transcript`/`empty`. */
  transcript: string;
  /** Messages the format parser read (0 for formats filed as they are). */
  messageCount: number;
  notes: NormaliseNote[];
}

/** What a format parser returns when the content is its format. */
export interface ParsedChat {
  transcript: string;
  messageCount: number;
}

/** One drawer-to-be cut from a conversation (docs/palace-behaviour.md §5.5, §5.6). */
export interface ConversationChunk {
  content: string;
  chunkIndex: number;
}

export interface ChunkLimits {
  /** Slice size in code points (config `chunk_size`, default 800). */
  chunkSize: number;
  /** Units whose stripped length is at most this are dropped (default 30 in conversations mode). */
  minChunkSize: number;
}

export const DEFAULT_CONVERSATION_LIMITS: ChunkLimits = { chunkSize: 800, minChunkSize: 30 };
