/**
 * Hybrid search (docs/palace-behaviour.md §8.4 with the refinements adopted in docs/decisions.md palace 13 and 14):
 * vector candidates ∪ lexical candidates, exact cosine distances for both, the product's own
 * BM25 over the pool, one rerank, identical passages from different files folded.
 */
import path from 'node:path';
import { Type } from 'typebox';
import type { Static } from 'typebox';
import type { Drawer } from '../../core/drawer.js';
import { logicalDrawerId } from '../../core/drawer.js';
import { INPUT_FORMATS, NON_BLANK, nullable } from '../../core/schema.js';
import { maskUrlCredentials } from '../../core/url-credentials.js';
import { bm25ScoresOfTokens, lexicalTokens } from '../../core/lexical.js';
import { codePointLength } from '../../core/text.js';
import { NAME_RULES, validateDateWindow } from '../../core/validate.js';
import type { CandidatePool, DrawerFilter, PoolRequest, VectorHit } from '../../stores/ports/drawers/drawer-index.js';
import type { DrawerContext } from '../context.js';
import { clampToSchema, defineOperation, invoke } from '../operation.js';
import { sanitizeQuery } from './query-sanitizer.js';
import { drawerKind, exchangePlace, fusedScores, queryShape } from './search-fusion.js';
import { commonSpeakerTokens, lexicalQueryTokens } from './query-terms.js';
import { sessionDate } from './query-dates.js';
import { lexicalEvidence } from './lexical-evidence.js';

export const CANDIDATE_STRATEGIES = ['vector', 'union'] as const;
export type CandidateStrategy = (typeof CANDIDATE_STRATEGIES)[number];

/** Candidate pool per strategy, as a multiple of the results asked for (docs/decisions.md palace 13). */
const POOL_FACTOR = 4;

export const SEARCH_INPUT = Type.Object({
  query: Type.String({
    description: 'Search keywords or one short question (up to 250 characters are meant; on MCP a longer one is reduced to its last question).',
    pattern: NON_BLANK,
    maxLength: 250,
  }),
  limit: Type.Optional(Type.Integer({ description: 'Maximum results (1–100; out-of-range values are clamped).', minimum: 1, maximum: 100, default: 5 })),
  wing: Type.Optional(Type.String({ description: 'Only drawers in this wing.', format: INPUT_FORMATS.name })),
  room: Type.Optional(Type.String({ description: 'Only drawers in this room.', format: INPUT_FORMATS.name })),
  source_file: Type.Optional(
    Type.String({ description: "Only drawers whose full stored source path equals this (use a hit's source_path).", format: INPUT_FORMATS.sourceFileFilter }),
  ),
  since: Type.Optional(Type.String({ description: 'Only drawers filed at or after this ISO date/datetime.', format: INPUT_FORMATS.dateBound })),
  before: Type.Optional(Type.String({ description: 'Only drawers filed strictly before this ISO date/datetime.', format: INPUT_FORMATS.dateBound })),
  max_distance: Type.Optional(
    Type.Number({
      description: 'Drop results whose cosine distance exceeds this (0 identical … 2 opposite; 0 disables). Default 1.5 on MCP, 0 (off) on REST and the CLI.',
      minimum: 0,
    }),
  ),
  candidate_strategy: Type.Optional(
    Type.Enum([...CANDIDATE_STRATEGIES], { type: 'string',
      description: '"union" (default) adds BM25 lexical candidates to the vector ones; "vector" uses vectors only.' }),
  ),
  context: Type.Optional(Type.String({ description: 'Background for your own benefit; never embedded or used for ranking.' })),
}, { additionalProperties: false });

export type SearchInput = Static<typeof SEARCH_INPUT>;

const ALSO_IN = Type.Object({ drawer_id: Type.String(), source_file: Type.String(), source_path: Type.String(), wing: Type.String(), room: Type.String() });

export const SEARCH_HIT = Type.Object({
  text: Type.String({ description: "The drawer's verbatim text." }),
  wing: Type.String(),
  room: Type.String(),
  source_file: Type.String({ description: 'Base name of the stored source path ("?" when none).' }),
  source_path: Type.String({ description: 'The full stored source path; use it for the source_file filter.' }),
  drawer_id: Type.String(),
  created_at: Type.String({ description: 'When the drawer was filed.' }),
  filed_at: Type.String(),
  similarity: nullable(Type.Number()),
  distance: nullable(Type.Number()),
  effective_distance: nullable(Type.Number()),
  bm25_score: Type.Number(),
  matched_via: Type.Enum(['drawer', 'bm25'], { type: 'string' }),
  also_in: Type.Optional(Type.Array(ALSO_IN, { description: 'The same text in other source files, folded into this hit.' })),
});

export type SearchHit = Static<typeof SEARCH_HIT>;

export const SEARCH_OUTPUT = Type.Object({
  query: Type.String({ description: 'The query actually searched.' }),
  filters: Type.Object({ wing: nullable(Type.String()), room: nullable(Type.String()), source_file: nullable(Type.String()), since: nullable(Type.String()),
    before: nullable(Type.String()) }),
  candidate_strategy: Type.Enum([...CANDIDATE_STRATEGIES], { type: 'string' }),
  results: Type.Array(SEARCH_HIT),
  total_before_filter: Type.Integer({ description: 'Candidates the vector stage returned.' }),
  available_in_scope: Type.Integer({ description: 'Drawers matching the filters.' }),
  query_sanitized: Type.Optional(Type.Literal(true)),
  sanitizer: Type.Optional(Type.Object({ method: Type.String(), original_length: Type.Integer(), clean_length: Type.Integer(), clean_query: Type.String() })),
  context_received: Type.Optional(Type.Literal(true)),
});

export type SearchResult = Static<typeof SEARCH_OUTPUT>;

/** What a binding of search declares as its own (docs/palace-behaviour.md §8.2, §8.6). */
export interface SearchOptions {
  /** Reduce contaminated long queries (docs/palace-behaviour.md §8.2): the MCP tool path; REST and the CLI search the query as given. */
  sanitize: boolean;
  /** `max_distance` when absent: 1.5 on the MCP tool path, 0 (off) on REST and the CLI (docs/palace-behaviour.md §8.6). */
  defaultMaxDistance: number;
}

interface Candidate {
  drawer: Drawer;
  distance: number;
  via: 'drawer' | 'bm25';
  bm25: number;
  score: number;
}

const round = (x: number, places: number) => Math.round(x * 10 ** places) / 10 ** places;

function toHit(c: Candidate): SearchHit {
  const m = c.drawer.meta;
  // Drawers mined from a credentialed URL before credentials were split off still hold it (issue 24 S1).
  const stored = typeof m.source_file === 'string' ? maskUrlCredentials(m.source_file) : '';
  const distance = round(c.distance, 4);
  return {
    text: c.drawer.content,
    wing: m.wing || 'unknown',
    room: m.room || 'unknown',
    source_file: stored ? path.basename(stored) : '?',
    source_path: stored,
    drawer_id: logicalDrawerId(c.drawer),
    created_at: m.filed_at || 'unknown',
    filed_at: m.filed_at || 'unknown',
    similarity: round(Math.max(0, 1 - c.distance), 3),
    distance,
    effective_distance: distance,
    bm25_score: round(c.bm25, 3),
    matched_via: c.via,
  };
}

/**
 * Fold hits whose text is identical but that come from different source files into the best
 * ranked one, which lists the others under `also_in`; repeats inside one file stay separate.
 */
function foldCopies(ranked: Candidate[]): SearchHit[] {
  const out: SearchHit[] = [];
  const byText = new Map<string, SearchHit>();
  for (const c of ranked) {
    const hit = toHit(c);
    const first = byText.get(hit.text);
    if (first && first.source_path !== hit.source_path && !first.also_in?.some((a) => a.source_path === hit.source_path)) {
      (first.also_in ??= []).push({ drawer_id: hit.drawer_id, source_file: hit.source_file, source_path: hit.source_path, wing: hit.wing, room: hit.room });
      continue;
    }
    if (!first) byText.set(hit.text, hit);
    out.push(hit);
  }
  return out;
}

/** A vector-only search's pool: the vector leg and the scope's size; the tokens still score the pool. */
async function vectorOnly(ctx: DrawerContext, vector: Float32Array, k: number, filter: DrawerFilter,
  lexicalTokensOf: PoolRequest['lexicalTokens']): Promise<CandidatePool> {
  const [hits, inScope] = await Promise.all([ctx.drawers.knn(vector, k, filter), ctx.drawers.count(filter)]);
  return { vector: hits, tokens: lexicalTokensOf(hits), lexical: [], inScope };
}

async function runSearch(input: SearchInput, ctx: DrawerContext, opts: SearchOptions): Promise<SearchResult> {
  const limit = clampToSchema(SEARCH_INPUT.properties.limit, input.limit);
  const wing = input.wing?.trim() || undefined;
  const room = input.room?.trim() || undefined;
  const sourceFile = input.source_file?.trim() || undefined;
  const window = validateDateWindow(input.since, input.before);
  const maxDistance = input.max_distance ?? opts.defaultMaxDistance;
  const strategy = input.candidate_strategy ?? 'union';

  const sanitized = opts.sanitize
    ? sanitizeQuery(input.query)
    : { query: input.query.trim(), method: 'passthrough' as const, originalLength: codePointLength(input.query) };
  const query = sanitized.query;
  const filter: DrawerFilter = { wing, room, sourceFile, since: window.since, before: window.before };
  const poolSize = POOL_FACTOR * limit;

  const [vector] = await ctx.embedder.embed([query]);
  if (!vector) throw new Error('embedder returned no vector for the query');
  // The words the lexical leg searches and scores: without function words and common speaker names (query-terms.ts).
  const shape = queryShape(query);
  const lexicalTokensOf = (hits: readonly VectorHit[]) => lexicalQueryTokens(query, shape, commonSpeakerTokens(hits.map((h) => h.drawer)));
  // A union search asks for both legs and the scope's size at once; the lexical rows come with their exact distances.
  const pool: CandidatePool = strategy === 'union'
    ? await ctx.drawers.candidatePool({ vector, k: poolSize, filter, lexicalTokens: lexicalTokensOf })
    : await vectorOnly(ctx, vector, poolSize, filter, lexicalTokensOf);
  const vectorHits = pool.vector;
  const tokens = pool.tokens;
  const candidates = new Map<string, Candidate>();
  for (const h of vectorHits) {
    if (maxDistance > 0 && h.distance > maxDistance) continue;
    candidates.set(h.drawer.id, { drawer: h.drawer, distance: h.distance, via: 'drawer', bm25: 0, score: 0 });
  }
  for (const { drawer, distance } of pool.lexical) {
    // Lexical candidates get their exact distance too, and obey max_distance (docs/decisions.md palace 13).
    if (candidates.has(drawer.id) || (maxDistance > 0 && distance > maxDistance)) continue;
    candidates.set(drawer.id, { drawer, distance, via: 'bm25', bm25: 0, score: 0 });
  }

  const pooled = [...candidates.values()];
  const scored = pooled.map((c) => ({ tokens: lexicalTokens(c.drawer.content), kind: drawerKind(c.drawer.meta) }));
  const queryTokens = lexicalTokens(tokens.join(' '));
  const bm25 = bm25ScoresOfTokens(queryTokens, scored.map((c) => c.tokens));
  // What the ranking reads: the same BM25, on word stems where a question meets code (lexical-evidence.ts).
  const evidence = lexicalEvidence(queryTokens, shape, scored, bm25);
  const fused = fusedScores(query,
    pooled.map((c, i) => ({ similarity: 1 - c.distance, bm25: evidence[i]!, kind: scored[i]!.kind, place: exchangePlace(c.drawer.meta),
      sessionDate: sessionDate(c.drawer.meta) })
    ));
  pooled.forEach((c, i) => {
    c.bm25 = bm25[i]!;
    c.score = fused[i]!;
  });
  // Ties: the more recently filed drawer first, then the id, so both profiles agree exactly.
  pooled.sort((a, b) =>
    b.score - a.score || (b.drawer.meta.filed_at ?? '').localeCompare(a.drawer.meta.filed_at ?? '') ||
    (a.drawer.id < b.drawer.id ? -1 : a.drawer.id > b.drawer.id ? 1 : 0)
  );

  const results = foldCopies(pooled).slice(0, limit);
  const result: SearchResult = {
    query,
    filters: { wing: wing ?? null, room: room ?? null, source_file: sourceFile ?? null, since: window.since ?? null, before: window.before ?? null },
    candidate_strategy: strategy,
    results,
    total_before_filter: vectorHits.length,
    available_in_scope: pool.inScope,
  };
  if (sanitized.method !== 'passthrough') {
    result.query_sanitized = true;
    result.sanitizer = { method: sanitized.method, original_length: sanitized.originalLength, clean_length: codePointLength(query), clean_query: query };
  }
  if (input.context !== undefined && input.context.trim() !== '') result.context_received = true;
  return result;
}

/** `mempalace_search`, `GET|POST /v1/search`, `mempalace search`: hybrid search of the drawers. */
export const searchOperation = defineOperation({
  name: 'search',
  input: SEARCH_INPUT,
  output: SEARCH_OUTPUT,
  clamped: ['query', 'limit'],
  enumMessages: { candidate_strategy: (v) => `candidate_strategy must be one of: ${CANDIDATE_STRATEGIES.join(', ')} (got ${JSON.stringify(v)})` },
  /** Wing and room filters are names (their format), and since < before. */
  rules: [...NAME_RULES, 'iso_date_or_datetime', 'window_order'],
  context: (rt) => rt.drawerContext,
  run: runSearch,
});

/** Search from code (CLI, eval, benchmarks, tests): the input is checked like any face's. */
export function search(ctx: DrawerContext, input: unknown, opts: SearchOptions): Promise<SearchResult> {
  return invoke(searchOperation, input, ctx, opts);
}
