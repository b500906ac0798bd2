/**
 * A second encoder (issue 26): all-MiniLM-L6-v2 against bge-small-en-v1.5, each in fp32 and int8,
 * and the two fused, on the raw vector order (no lexical part, exact cosine over every passage):
 *
 * - CoSQA dev (../shared/data/cosqa-dev.json): every distinct function is a passage, every query
 *   labelled 1 is ranked against all of them; MRR@10, recall@1/10, and MRR on the even / odd halves.
 * - The conversation fixture (tests/fixtures/eval/conversations.json): each question ranks the turns
 *   of its own conversation (`speaker: text`); turn recall@10 (share of the evidence turns in the
 *   top 10, averaged over questions), turn MRR@10, and sessions ranked by their best turn: session
 *   recall@5 and the share of questions with every evidence session in the top 5.
 * - Throughput: passages per second embedding mining chunks (this repository's files cut by
 *   core/chunking.ts as a mine cuts them), each model with its default batch size and threads,
 *   the models interleaved round by round so load hits all alike; median of the rounds, and each
 *   model's time relative to MiniLM fp32 (today's default) per round. The CoSQA functions are
 *   embedded once, before the rounds, for quality only.
 *
 * bge is run with and without its query instruction (on queries only). Fusions of a MiniLM and a
 * bge of the same precision: `sum w` scores w·cos_MiniLM + (1−w)·cos_bge (one inner product over
 * concatenated vectors); `z w` the same over cosines turned into z-scores over the ranked pool.
 *
 *   npx tsx bench/encoders.bench.ts [rounds=3] [chunks=64]
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../app/config.js';
import { chunkText } from '../core/chunking.js';
import { MiniLmEmbedder } from '../embed/minilm.js';
import { BGE_INT8_MODEL_NAME, BGE_MODEL_NAME, BGE_QUERY_INSTRUCTION, MINILM_INT8_MODEL_NAME, MINILM_MODEL_NAME } from '../embed/model-locator.js';
import { COSQA_FILE } from './lib/cosqa.js';
import { machine, median } from './lib/stats.js';

const ROUNDS = Number(process.argv[2] ?? 3);
const CHUNKS = Number(process.argv[3] ?? 64);
const REPO = path.resolve(import.meta.dirname, '..');
const MODELS = [MINILM_MODEL_NAME, MINILM_INT8_MODEL_NAME, BGE_MODEL_NAME, BGE_INT8_MODEL_NAME] as const;
type Model = (typeof MODELS)[number];
const isBge = (model: Model) => model === BGE_MODEL_NAME || model === BGE_INT8_MODEL_NAME;
const PAIRS = [
  { precision: 'fp32', minilm: MINILM_MODEL_NAME, bge: BGE_MODEL_NAME },
  { precision: 'int8', minilm: MINILM_INT8_MODEL_NAME, bge: BGE_INT8_MODEL_NAME },
] as const;
/** Weight of MiniLM in a fusion; bge gets the rest. */
const WEIGHTS = [0.5, 0.6, 0.7];

// ---- data ----------------------------------------------------------------------------------

interface CosqaPair {
  doc: string;
  code: string;
  label: number;
}
interface Conversations {
  conversations: { id: string; sessions: { id: string; turns: { id: string; speaker: string; text: string }[] }[] }[];
  questions: { conversation: string; question: string; evidence_turns: string[]; evidence_sessions: string[] }[];
}

const cosqaPairs = JSON.parse(await fs.readFile(COSQA_FILE, 'utf8')) as CosqaPair[];
const functions = [...new Set(cosqaPairs.map((p) => p.code))];
const functionIndex = new Map(functions.map((code, i) => [code, i]));
/** Queries labelled 1, with the index of their function and their half (position in the file). */
const cosqaQueries = cosqaPairs.flatMap((p, i) => (p.label === 1 ? [{ text: p.doc, target: functionIndex.get(p.code)!, half: i % 2 }] : []));

const chat = JSON.parse(await fs.readFile(path.join(REPO, 'tests/fixtures/eval/conversations.json'), 'utf8')) as Conversations;
const turns = chat.conversations.flatMap((c) => c.sessions.flatMap((s) => s.turns.map((t) => ({ ...t, conversation: c.id, session: s.id }))));
const chatQuestions = chat.questions.filter((q) => q.evidence_turns.length > 0);

/** Chunks of this repository's files, as a mine cuts them (the default chunk size); every 4th, up to CHUNKS. */
const sources = execFileSync('git', ['ls-files', '*.ts', '*.md'], { cwd: REPO, encoding: 'utf8' }).split('\n').filter(Boolean).sort();
const allChunks = (await Promise.all(sources.map(async (f) => chunkText(await fs.readFile(path.join(REPO, f), 'utf8')).map((c) => c.content)))).flat();
const miningChunks = allChunks.filter((_, i) => i % 4 === 0).slice(0, CHUNKS);

// ---- embedding and timing ------------------------------------------------------------------

const config = loadConfig({ ...process.env, MEMPALACE_PALACE: await fs.mkdtemp(path.join(os.tmpdir(), 'encoders-')) });
const embedders = new Map(MODELS.map((m) => [m, new MiniLmEmbedder(config, { model: m })]));
const instructed = (q: string) => `${BGE_QUERY_INSTRUCTION}${q}`;

interface Vectors {
  passages: Float32Array[];
  queries: Float32Array[];
  instructedQueries: Float32Array[];
  turns: Float32Array[];
  chatQueries: Float32Array[];
  instructedChatQueries: Float32Array[];
}
const vectors = new Map<Model, Vectors>();
/** Seconds each model took to embed the mining chunks, per round. */
const seconds = Object.fromEntries(MODELS.map((m) => [m, []])) as unknown as Record<Model, number[]>;

const startedAt = new Date().toISOString();
for (const m of MODELS) {
  const e = embedders.get(m)!;
  const queryTexts = cosqaQueries.map((q) => q.text);
  const chatTexts = chatQuestions.map((q) => q.question);
  vectors.set(m, {
    passages: await e.embed(functions),
    queries: await e.embed(queryTexts),
    instructedQueries: isBge(m) ? await e.embed(queryTexts.map(instructed)) : [],
    turns: await e.embed(turns.map((t) => `${t.speaker}: ${t.text}`)),
    chatQueries: await e.embed(chatTexts),
    instructedChatQueries: isBge(m) ? await e.embed(chatTexts.map(instructed)) : [],
  });
  console.error(`${m}: quality vectors done, load ${os.loadavg()[0]!.toFixed(2)}`);
}
const loadAtStart = os.loadavg();
for (let round = 0; round < ROUNDS; round += 1) {
  for (const m of MODELS) {
    const started = performance.now();
    await embedders.get(m)!.embed(miningChunks);
    seconds[m].push((performance.now() - started) / 1000);
  }
  console.error(`round ${round + 1}/${ROUNDS} done, load ${os.loadavg()[0]!.toFixed(2)}`);
}
const loadAtEnd = os.loadavg();
await Promise.all([...embedders.values()].map((e) => e.close()));

// ---- scoring -------------------------------------------------------------------------------

const dot = (a: Float32Array, b: Float32Array) => {
  let s = 0;
  for (let i = 0; i < a.length; i += 1) s += a[i]! * b[i]!;
  return s;
};

/** The scores of one query over its pool, by one scorer. */
type Scorer = (query: number, pool: readonly number[], set: 'cosqa' | 'chat') => number[];

function cosines(model: Model, instruction: boolean): Scorer {
  const v = vectors.get(model)!;
  return (query, pool, set) => {
    const q = set === 'cosqa' ? (instruction ? v.instructedQueries : v.queries)[query]! : (instruction ? v.instructedChatQueries : v.chatQueries)[query]!;
    const passages = set === 'cosqa' ? v.passages : v.turns;
    return pool.map((p) => dot(q, passages[p]!));
  };
}

function zScores(scores: number[]): number[] {
  const mean = scores.reduce((s, x) => s + x, 0) / scores.length;
  const std = Math.sqrt(scores.reduce((s, x) => s + (x - mean) ** 2, 0) / scores.length) || 1;
  return scores.map((x) => (x - mean) / std);
}

function fused(a: Scorer, b: Scorer, weight: number, normalise: boolean): Scorer {
  return (query, pool, set) => {
    const [sa, sb] = [a(query, pool, set), b(query, pool, set)];
    const [na, nb] = normalise ? [zScores(sa), zScores(sb)] : [sa, sb];
    return na.map((x, i) => weight * x + (1 - weight) * nb[i]!);
  };
}

/** Pool entries by descending score (ties by position, so runs are stable). */
function ranked(pool: readonly number[], scores: number[]): number[] {
  return pool.map((p, i) => ({ p, s: scores[i]! })).sort((x, y) => y.s - x.s || x.p - y.p).map((x) => x.p);
}

interface Row {
  cosqa: { mrr: number; r1: number; r10: number; even: number; odd: number };
  chat: { turnR10: number; turnMrr: number; sessionR5: number; allSessionsTop5: number };
}

const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
const reciprocal = (rank: number) => (rank >= 0 && rank < 10 ? 1 / (rank + 1) : 0);
const everyFunction = functions.map((_, i) => i);

function evaluate(score: Scorer): Row {
  const ranks = cosqaQueries.map((q, i) => ranked(everyFunction, score(i, everyFunction, 'cosqa')).indexOf(q.target));
  const mrrOf = (half: number) => mean(ranks.filter((_, i) => cosqaQueries[i]!.half === half).map(reciprocal));
  const perQuestion = chatQuestions.map((q, i) => {
    const pool = turns.flatMap((t, j) => (t.conversation === q.conversation ? [j] : []));
    const order = ranked(pool, score(i, pool, 'chat'));
    const top10 = new Set(order.slice(0, 10).map((j) => turns[j]!.id));
    const firstEvidence = order.findIndex((j) => q.evidence_turns.includes(turns[j]!.id));
    const sessions: string[] = [];
    for (const j of order) if (!sessions.includes(turns[j]!.session)) sessions.push(turns[j]!.session);
    const top5 = new Set(sessions.slice(0, 5));
    const sessionsFound = q.evidence_sessions.filter((s) => top5.has(s)).length;
    return {
      turnR10: q.evidence_turns.filter((t) => top10.has(t)).length / q.evidence_turns.length,
      turnMrr: reciprocal(firstEvidence),
      sessionR5: sessionsFound / q.evidence_sessions.length,
      allSessionsTop5: sessionsFound === q.evidence_sessions.length ? 1 : 0,
    };
  });
  return {
    cosqa: { mrr: mean(ranks.map(reciprocal)), r1: mean(ranks.map((r) => (r === 0 ? 1 : 0))), r10: mean(ranks.map((r) => (r >= 0 && r < 10 ? 1 : 0))),
      even: mrrOf(0), odd: mrrOf(1) },
    chat: {
      turnR10: mean(perQuestion.map((x) => x.turnR10)),
      turnMrr: mean(perQuestion.map((x) => x.turnMrr)),
      sessionR5: mean(perQuestion.map((x) => x.sessionR5)),
      allSessionsTop5: mean(perQuestion.map((x) => x.allSessionsTop5)),
    },
  };
}

// ---- report --------------------------------------------------------------------------------

const baseline = MINILM_MODEL_NAME;
const ratioPerRound = (models: Model[]) => seconds[baseline].map((base, r) => models.reduce((s, m) => s + seconds[m][r]!, 0) / base);
const fmtRatios = (xs: number[]) => `${median(xs).toFixed(2)}× (${xs.map((x) => x.toFixed(2)).join(', ')})`;

const quality: string[] = [
  '| encoder(s) | query instruction (bge) | CoSQA MRR@10 | recall@1 | recall@10 | MRR even / odd | conv. turn recall@10 | turn MRR@10 | session recall@5 (best turn) | all evidence sessions in top 5 |',
  '|---|---|---|---|---|---|---|---|---|---|',
];
const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
const addRow = (name: string, instruction: string, row: Row) =>
  quality.push(
    `| ${name} | ${instruction} | ${row.cosqa.mrr.toFixed(3)} | ${pct(row.cosqa.r1)} | ${pct(row.cosqa.r10)} | ${row.cosqa.even.toFixed(3)} / ${
      row.cosqa.odd.toFixed(3)
    } | ${pct(row.chat.turnR10)} | ${row.chat.turnMrr.toFixed(3)} | ${pct(row.chat.sessionR5)} | ${pct(row.chat.allSessionsTop5)} |`,
  );
const json: Record<string, Row> = {};
for (const m of MODELS) {
  for (const instruction of isBge(m) ? [false, true] : [false]) {
    const row = evaluate(cosines(m, instruction));
    json[`${m}${instruction ? '+instruction' : ''}`] = row;
    addRow(m, isBge(m) ? (instruction ? 'yes' : 'no') : '–', row);
  }
}
for (const pair of PAIRS) {
  for (const instruction of [false, true]) {
    for (const normalise of [false, true]) {
      for (const w of WEIGHTS) {
        const name = `${pair.precision} pair, ${normalise ? 'z' : 'sum'} ${w.toFixed(1)}/${(1 - w).toFixed(1)}`;
        const row = evaluate(fused(cosines(pair.minilm, false), cosines(pair.bge, instruction), w, normalise));
        json[`${name}${instruction ? '+instruction' : ''}`] = row;
        addRow(name, instruction ? 'yes' : 'no', row);
      }
    }
  }
}

const speed: string[] = [
  `| encoder(s) | mining chunks/s (${miningChunks.length} chunks, median of ${ROUNDS}) | embedding time vs MiniLM fp32: median (per round) |`,
  '|---|---|---|',
];
for (const m of MODELS) speed.push(`| ${m} | ${(miningChunks.length / median(seconds[m])).toFixed(1)} | ${fmtRatios(ratioPerRound([m]))} |`);
for (const pair of PAIRS) {
  const both: Model[] = [pair.minilm, pair.bge];
  const pairSeconds = seconds[pair.minilm].map((s, r) => s + seconds[pair.bge][r]!);
  speed.push(`| ${pair.precision} pair (both encoders) | ${(miningChunks.length / median(pairSeconds)).toFixed(1)} | ${fmtRatios(ratioPerRound(both))} |`);
}

const chunkChars = median(miningChunks.map((c) => c.length));
console.log([
  `Measured ${machine()}, ${startedAt}; load average when the timed rounds began ${loadAtStart.map((x) => x.toFixed(2)).join(' ')}, at their end ${
    loadAtEnd.map((x) => x.toFixed(2)).join(' ')
  }.`,
  `Threads: each model's default (${config.embed.threads} intra-op threads); batch sizes: each model's default. ${ROUNDS} rounds, models interleaved within each round.`,
  `CoSQA: ${functions.length} functions, ${cosqaQueries.length} queries (exact cosine over all functions). Conversations: ${turns.length} turns in ${chat.conversations.length} conversations, ${chatQuestions.length} questions. Mining chunks: median ${chunkChars} characters.`,
  '',
  ...quality,
  '',
  ...speed,
].join('\n'));
console.log(JSON.stringify({ rounds: ROUNDS, load: { start: loadAtStart, end: loadAtEnd }, seconds, quality: json }));
