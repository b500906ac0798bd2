/**
 * `mempalace eval`: retrieval quality of a palace on a labelled set, per strategy side by side, with
 * the difference of each strategy from the first as a paired-bootstrap interval. Queries run on the
 * tool path (sanitised query, max_distance 1.5), as agents search.
 *
 * A drawer set's result stands for its drawer id, its source file and path (and the copies folded
 * into it); a conversational set's result stands for the turns it holds and its session. There,
 * besides the drawer measures (a result counts when it holds an evidence turn, or is in an evidence
 * session when the question names sessions only), sessions are ranked by their best drawer
 * (session recall@5/10) and the evidence turns held by the first 10 results give turn recall@10.
 */
import type { DrawerContext } from '../context.js';
import type { CandidateStrategy, SearchHit } from '../search/search.js';
import { search } from '../search/search.js';
import { conversationWing } from './file-conversations.js';
import type { LabelledSet } from './labelled-set.js';
import type { CUTOFFS, Difference } from './metrics.js';
import { mean, pairedBootstrap, reciprocalRank, recallAt } from './metrics.js';

const TOOL_PATH = { sanitize: true, defaultMaxDistance: 1.5 };
/** Results asked for a conversational question: enough to rank ten distinct sessions. */
const CONVERSATION_DEPTH = 100;
const DRAWER_DEPTH = 10;

export interface StrategyScores {
  n: number;
  'recall@1': number;
  'recall@5': number;
  'recall@10': number;
  'mrr@10': number;
  session?: { 'recall@5': number; 'recall@10': number };
  turn?: { 'recall@10': number };
}

export interface EvalReport {
  kind: LabelledSet['kind'];
  n: number;
  /** Questions without evidence, not measured. */
  skipped: number;
  strategies: Record<string, StrategyScores>;
  by_category: Record<string, Record<string, StrategyScores>>;
  /** Each strategy after the first against the first, on MRR@10 and recall@10. */
  differences: Record<string, { 'mrr@10': Difference; 'recall@10': Difference }>;
}

/** One query's measures under one strategy. */
interface QueryScores {
  category: string;
  recall: Record<(typeof CUTOFFS)[number], number>;
  rr: number;
  session?: { r5: number; r10: number };
  turn?: number;
}

interface Question {
  query: string;
  category: string;
  wing?: string;
  /** What a result must stand for to count. */
  expected: Set<string>;
  sessions?: Set<string>;
  turns?: Set<string>;
}

function questionsOf(set: LabelledSet): Question[] {
  if (set.kind === 'drawers') return set.queries.map((q) => ({ query: q.query, category: q.category, expected: new Set(q.expected) }));
  const sessionOfTurn = new Map(set.conversations.flatMap((c) => c.sessions.flatMap((s) => s.turns.map((t) => [t.id, s.id] as const))));
  return set.questions.map((q) => {
    const sessions = new Set(q.evidence_sessions.length > 0 ? q.evidence_sessions : q.evidence_turns.map((t) => sessionOfTurn.get(t)!));
    const turns = new Set(q.evidence_turns);
    return { query: q.question, category: q.category, wing: conversationWing(q.conversation), expected: turns.size > 0 ? turns : sessions, sessions, turns };
  });
}

function drawerItems(hit: SearchHit): string[] {
  return [hit.drawer_id, hit.source_file, hit.source_path, ...(hit.also_in ?? []).flatMap((a) => [a.drawer_id, a.source_file, a.source_path])];
}

async function scoreQuestion(ctx: DrawerContext, q: Question, strategy: CandidateStrategy): Promise<QueryScores> {
  const conversational = q.turns !== undefined;
  const r = await search(ctx, { query: q.query, limit: conversational ? CONVERSATION_DEPTH : DRAWER_DEPTH, wing: q.wing, candidate_strategy: strategy },
    TOOL_PATH);
  let ranked: string[][];
  let scores: Pick<QueryScores, 'session' | 'turn'> = {};
  if (!conversational) ranked = r.results.map(drawerItems);
  else {
    const metas = new Map((await ctx.drawers.get(r.results.map((h) => h.drawer_id))).map((d) => [d.id, d.meta]));
    ranked = r.results.map((h) => {
      const meta = metas.get(h.drawer_id);
      const turns = typeof meta?.turn_ids === 'string' ? meta.turn_ids.split(';') : [];
      return [...turns, String(meta?.session_id ?? '')];
    });
    const sessions = [...new Set(ranked.map((items) => items[items.length - 1]!))].map((s) => [s]);
    scores = {
      session: { r5: recallAt(sessions, q.sessions!, 5), r10: recallAt(sessions, q.sessions!, 10) },
      ...(q.turns!.size > 0 ? { turn: recallAt(ranked, q.turns!, 10) } : {}),
    };
  }
  return {
    category: q.category,
    recall: { 1: recallAt(ranked, q.expected, 1), 5: recallAt(ranked, q.expected, 5), 10: recallAt(ranked, q.expected, 10) },
    rr: reciprocalRank(ranked, q.expected),
    ...scores,
  };
}

function summarise(rows: readonly QueryScores[]): StrategyScores {
  const out: StrategyScores = {
    n: rows.length,
    'recall@1': mean(rows.map((r) => r.recall[1])),
    'recall@5': mean(rows.map((r) => r.recall[5])),
    'recall@10': mean(rows.map((r) => r.recall[10])),
    'mrr@10': mean(rows.map((r) => r.rr)),
  };
  const sessions = rows.flatMap((r) => (r.session ? [r.session] : []));
  if (sessions.length > 0) out.session = { 'recall@5': mean(sessions.map((s) => s.r5)), 'recall@10': mean(sessions.map((s) => s.r10)) };
  const turns = rows.flatMap((r) => (r.turn === undefined ? [] : [r.turn]));
  if (turns.length > 0) out.turn = { 'recall@10': mean(turns) };
  return out;
}

/** Measures `strategies` (the first is the reference of the differences) over every question of `set`. */
export async function evaluate(ctx: DrawerContext, set: LabelledSet, strategies: readonly CandidateStrategy[],
  onProgress?: (done: number, total: number) => void): Promise<EvalReport> {
  const questions = questionsOf(set);
  const rows: Record<string, QueryScores[]> = {};
  const total = questions.length * strategies.length;
  let done = 0;
  for (const strategy of strategies) {
    rows[strategy] = [];
    for (const q of questions) {
      rows[strategy].push(await scoreQuestion(ctx, q, strategy));
      onProgress?.(++done, total);
    }
  }
  const categories = [...new Set(questions.map((q) => q.category))].sort();
  const [reference, ...others] = strategies;
  return {
    kind: set.kind,
    n: questions.length,
    skipped: set.kind === 'conversations' ? set.skipped : 0,
    strategies: Object.fromEntries(strategies.map((s) => [s, summarise(rows[s]!)])),
    by_category: Object.fromEntries(
      categories.map((c) => [c, Object.fromEntries(strategies.map((s) => [s, summarise(rows[s]!.filter((r) => r.category === c))]))]),
    ),
    differences: Object.fromEntries(others.map((s) => [s, {
      'mrr@10': pairedBootstrap(rows[s]!.map((r) => r.rr), rows[reference!]!.map((r) => r.rr)),
      'recall@10': pairedBootstrap(rows[s]!.map((r) => r.recall[10]), rows[reference!]!.map((r) => r.recall[10])),
    }])),
  };
}
