/**
 * A live agent session as the hooks see it: the host's transcript (Claude Code or Codex JSONL)
 * read into numbered exchanges — one human message and the replies that followed it — so a
 * save can file exactly the exchanges it has not filed before.
 */
import { claudeCodeMessages } from './claude-code.js';
import { codexMessages } from './codex.js';
import { exchangeUnit } from './exchange.js';
import { quoteUserText } from './transcript.js';
import type { ChatMessage } from './types.js';

export const HARNESSES = ['claude-code', 'codex'] as const;
export type Harness = (typeof HARNESSES)[number];

export interface SessionExchange {
  /** Position of the exchange in the session, from 0; stable as the transcript grows. */
  index: number;
  /** The exchange as filed (quoted question, then the answer). */
  text: string;
  /** False while the question still waits for its answer. */
  answered: boolean;
}

export interface SessionTranscript {
  /** Human messages so far (the stop hook's counter). */
  humanMessages: number;
  exchanges: SessionExchange[];
}

export function sessionMessages(content: string, harness: Harness): ChatMessage[] {
  return harness === 'codex' ? codexMessages(content) ?? [] : claudeCodeMessages(content);
}

/** Exchanges of a transcript; replies before the first question form exchange 0 on their own. */
export function readSession(content: string, harness: Harness): SessionTranscript {
  const exchanges: { question: string | undefined; answers: string[] }[] = [];
  let humanMessages = 0;
  for (const m of sessionMessages(content, harness)) {
    if (m.role === 'user') {
      humanMessages++;
      exchanges.push({ question: m.text, answers: [] });
    } else if (exchanges.length === 0) {
      exchanges.push({ question: undefined, answers: [m.text] });
    } else {
      exchanges[exchanges.length - 1]!.answers.push(m.text);
    }
  }
  return {
    humanMessages,
    exchanges: exchanges.map((e, index) => ({
      index,
      text: e.question === undefined ? e.answers.join('\n') : exchangeUnit(quoteUserText(e.question), e.answers.join('\n')),
      answered: e.answers.length > 0,
    })),
  };
}
