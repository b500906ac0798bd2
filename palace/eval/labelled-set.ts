/**
 * The two kinds of labelled set `mempalace eval` reads, checked whole before anything is filed or
 * searched (a bad record is refused naming its place, the field and the rule):
 *
 * - drawer queries, JSON lines `{ "query", "expected": [drawer id or source file, …], "category"? }`
 *   searched against an existing palace;
 * - a conversational set, one JSON object `{ "conversations": [{ "id", "sessions": [{ "id", "date",
 *   "turns": [{ "id", "speaker", "text" }] }] }], "questions": [{ "conversation", "question",
 *   "evidence_turns", "evidence_sessions", "category" }] }` filed into a palace first, one wing per
 *   conversation. Turn and session ids are unique across the file; questions without evidence are
 *   skipped (counted in `skipped`).
 */
import { z } from 'zod';
import { invalidArgument } from '../../core/errors.js';

const text = z.string().trim().min(1, { error: 'must be a non-empty string' });
const ids = z.array(text);

const DrawerQuery = z.object({ query: text, expected: ids.min(1, { error: 'must name at least one drawer id or source file' }), category: text.optional() });
const Turn = z.object({ id: text, speaker: text, text });
const Session = z.object({ id: text, date: text.optional(), turns: z.array(Turn).min(1, { error: 'must hold at least one turn' }) });
const Conversation = z.object({ id: text, sessions: z.array(Session).min(1, { error: 'must hold at least one session' }) });
const Question = z.object({ conversation: text, question: text, evidence_turns: ids.default([]), evidence_sessions: ids.default([]),
  category: z.union([text, z.number()]).optional() });
const ConversationalSet = z.object({ conversations: z.array(Conversation).min(1, { error: 'must hold at least one conversation' }),
  questions: z.array(Question) });

export type DrawerQuery = z.infer<typeof DrawerQuery>;
export type Turn = z.infer<typeof Turn>;
export type Session = z.infer<typeof Session>;
export type Conversation = z.infer<typeof Conversation>;
export interface ConversationQuestion {
  conversation: string;
  question: string;
  evidence_turns: string[];
  evidence_sessions: string[];
  category: string;
}

export type LabelledSet =
  | { kind: 'drawers'; queries: (DrawerQuery & { category: string })[] }
  | { kind: 'conversations'; conversations: Conversation[]; questions: ConversationQuestion[]; skipped: number };

const UNCATEGORISED = 'all';

function refuse(where: string, error: z.ZodError): never {
  const issue = error.issues[0]!;
  const field = [where, ...issue.path.map(String)].filter((p) => p !== '').join('.');
  const rule = issue.code === 'too_small' ? 'minimum' : issue.code === 'invalid_type' ? 'type' : issue.code;
  throw invalidArgument(field, rule, `${field}: ${issue.message}`);
}

function parseDrawerQueries(source: string): LabelledSet {
  const queries: (DrawerQuery & { category: string })[] = [];
  source.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw invalidArgument(`line ${i + 1}`, 'json', `line ${i + 1} is not JSON`);
    }
    const parsed = DrawerQuery.safeParse(value);
    if (!parsed.success) refuse(`line ${i + 1}`, parsed.error);
    queries.push({ ...parsed.data, category: parsed.data.category ?? UNCATEGORISED });
  });
  if (queries.length === 0) throw invalidArgument('set', 'non_empty', 'the set holds no query');
  return { kind: 'drawers', queries };
}

function unique(kind: string, values: readonly string[]): Set<string> {
  const seen = new Set<string>();
  for (const v of values) {
    if (seen.has(v)) throw invalidArgument(`${kind}.id`, 'unique', `${kind} id ${JSON.stringify(v)} appears twice; ids must be unique across the file`);
    seen.add(v);
  }
  return seen;
}

function parseConversations(value: unknown): LabelledSet {
  const parsed = ConversationalSet.safeParse(value);
  if (!parsed.success) refuse('', parsed.error);
  const { conversations } = parsed.data;
  const conversationIds = unique('conversations', conversations.map((c) => c.id));
  const sessions = unique('sessions', conversations.flatMap((c) => c.sessions.map((s) => s.id)));
  const turns = unique('turns', conversations.flatMap((c) => c.sessions.flatMap((s) => s.turns.map((t) => t.id))));
  const questions: ConversationQuestion[] = [];
  let skipped = 0;
  parsed.data.questions.forEach((q, i) => {
    if (!conversationIds.has(q.conversation))
      throw invalidArgument(`questions.${i}.conversation`, 'known_conversation',
        `questions.${i}.conversation names no conversation of the file: ${JSON.stringify(q.conversation)}`);
    for (const t of q.evidence_turns)
      if (!turns.has(t))
        throw invalidArgument(`questions.${i}.evidence_turns`, 'known_turn', `questions.${i}.evidence_turns names no turn of the file: ${JSON.stringify(t)}`);
    for (const s of q.evidence_sessions)
      if (!sessions.has(s))
        throw invalidArgument(`questions.${i}.evidence_sessions`, 'known_session',
          `questions.${i}.evidence_sessions names no session of the file: ${JSON.stringify(s)}`);
    if (q.evidence_turns.length === 0 && q.evidence_sessions.length === 0) {
      skipped++;
      return;
    }
    questions.push({ ...q, category: q.category === undefined ? UNCATEGORISED : String(q.category) });
  });
  return { kind: 'conversations', conversations, questions, skipped };
}

/** The set in `source` (the file's text): a conversational set when it is one JSON object with `conversations`, else JSON lines. */
export function parseLabelledSet(source: string): LabelledSet {
  const trimmed = source.trim();
  if (trimmed.startsWith('{') && !trimmed.includes('\n{')) {
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch {
      return parseDrawerQueries(source);
    }
    if (typeof value === 'object' && value !== null && 'conversations' in value) return parseConversations(value);
  }
  return parseDrawerQueries(source);
}
