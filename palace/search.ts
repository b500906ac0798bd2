/**
 * Hybrid search (palace-behaviour §8.4 with the refinements adopted in DECISIONS 13 and 14):
 * vector candidates ∪ lexical candidates, exact cosine distances for both, the product's own
 * BM25 over the pool, one rerank, identical passages from different files folded.
 */
import path from 'node:path';
import type { Drawer } from '../core/drawer.js';
import { logicalDrawerId } from '../core/drawer.js';
import { invalidArgument } from '../core/errors.js';
import { maskUrlCredentials } from '../core/url-credentials.js';
import { bm25Scores } from '../core/lexical.js';
import { codePointLength } from '../core/text.js';
import { dot } from '../core/vector.js';
import { validateDateWindow, validateOptionalName, validateSourceFileFilter } from '../core/validate.js';
import type { DrawerFilter } from '../stores/ports/drawers/drawer-index.js';
import type { DrawerContext } from './context.js';
import { sanitizeQuery } from './query-sanitizer.js';
import { drawerKind, exchangePlace, fusedScores, queryShape } from './search-fusion.js';
import { commonSpeakerTokens, lexicalQueryTokens } from './query-terms.js';
import { sessionDate } from './query-dates.js';

export const CANDIDATE_STRATEGIES = ['vector', 'union'] as const;
export type CandidateStrategy = (typeof CANDIDATE_STRATEGIES)[number];

/** Candidate pool per strategy, as a multiple of the results asked for (DECISIONS 13). */
const POOL_FACTOR = 4;

export interface SearchInput {
  query: unknown;
  limit?: unknown;
  wing?: unknown;
  room?: unknown;
  source_file?: unknown;
  since?: unknown;
  before?: unknown;
  max_distance?: unknown;
  candidate_strategy?: unknown;
  context?: unknown;
}

export interface SearchOptions {
  /** Tool path: reduce contaminated long queries (§8.2). The CLI searches the query as given. */
  sanitize: boolean;
  /** Default `max_distance` when absent: 1.5 on the tool path, 0 (off) elsewhere (§8.6). */
  defaultMaxDistance: number;
}

export interface AlsoIn {
  drawer_id: string;
  source_file: string;
  source_path: string;
  wing: string;
  room: string;
}

export interface SearchHit {
  text: string;
  wing: string;
  room: string;
  source_file: string;
  source_path: string;
  drawer_id: string;
  created_at: string;
  filed_at: string;
  similarity: number | null;
  distance: number | null;
  effective_distance: number | null;
  bm25_score: number;
  matched_via: 'drawer' | 'bm25';
  also_in?: AlsoIn[];
}

export interface SearchResult {
  query: string;
  filters: { wing: string | null; room: string | null; source_file: string | null; since: string | null; before: string | null };
  candidate_strategy: CandidateStrategy;
  results: SearchHit[];
  total_before_filter: number;
  available_in_scope: number;
  query_sanitized?: true;
  sanitizer?: { method: string; original_length: number; clean_length: number; clean_query: string };
  context_received?: true;
}

interface Candidate {
  drawer: Drawer;
  distance: number;
  via: 'drawer' | 'bm25';
  bm25: number;
  score: number;
}

const round = (x: number, places: number) => Math.round(x * 10 ** places) / 10 ** places;

function clampLimit(value: unknown): number {
  if (value === undefined || value === null) return 5;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidArgument('limit', 'integer', 'limit must be an integer');
  return Math.min(100, Math.max(1, Math.trunc(value)));
}

function parseMaxDistance(value: unknown, dflt: number): number {
  if (value === undefined || value === null) return dflt;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw invalidArgument('max_distance', 'non_negative_number', 'max_distance must be a number ≥ 0 (0 disables the filter)');
  }
  return value;
}

function parseStrategy(value: unknown): CandidateStrategy {
  if (value === undefined || value === null) return 'union';
  if (typeof value === 'string' && (CANDIDATE_STRATEGIES as readonly string[]).includes(value)) return value as CandidateStrategy;
  throw invalidArgument('candidate_strategy', 'one_of', `candidate_strategy must be one of: ${CANDIDATE_STRATEGIES.join(', ')}`);
}

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

export async function search(ctx: DrawerContext, input: SearchInput, opts: SearchOptions): Promise<SearchResult> {
  if (typeof input.query !== 'string' || input.query.trim() === '') {
    throw invalidArgument('query', 'non_empty_string', 'query must be a non-empty string');
  }
  const limit = clampLimit(input.limit);
  const wing = validateOptionalName('wing', input.wing);
  const room = validateOptionalName('room', input.room);
  const sourceFile = validateSourceFileFilter(input.source_file);
  const window = validateDateWindow(input.since, input.before);
  const maxDistance = parseMaxDistance(input.max_distance, opts.defaultMaxDistance);
  const strategy = parseStrategy(input.candidate_strategy);

  const sanitized = opts.sanitize ? sanitizeQuery(input.query) : { query: input.query.trim(), method: 'passthrough' as const, originalLength: codePointLength(input.query) };
  const query = sanitized.query;
  const filter: DrawerFilter = { wing, room, sourceFile, since: window.since, before: window.before };
  const pool = POOL_FACTOR * limit;

  const [vector] = await ctx.embedder.embed([query]);
  if (!vector) throw new Error('embedder returned no vector for the query');
  const vectorHits = await ctx.drawers.knn(vector, pool, filter);
  const candidates = new Map<string, Candidate>();
  for (const h of vectorHits) {
    if (maxDistance > 0 && h.distance > maxDistance) continue;
    candidates.set(h.drawer.id, { drawer: h.drawer, distance: h.distance, via: 'drawer', bm25: 0, score: 0 });
  }

  // The words the lexical leg searches and scores: without function words and common speaker names (query-terms.ts).
  const tokens = lexicalQueryTokens(query, queryShape(query), commonSpeakerTokens(vectorHits.map((h) => h.drawer)));
  if (strategy === 'union') {
    const lexical = tokens.length > 0 ? await ctx.drawers.lexical(tokens, pool, filter) : [];
    const fresh = lexical.filter((d) => !candidates.has(d.id));
    const vectors = await ctx.drawers.embeddings(fresh.map((d) => d.id));
    for (const d of fresh) {
      const v = vectors.get(d.id);
      if (!v) continue;
      // Lexical candidates get their exact distance too, and obey max_distance (DECISIONS 13).
      const distance = 1 - dot(vector, v);
      if (maxDistance > 0 && distance > maxDistance) continue;
      candidates.set(d.id, { drawer: d, distance, via: 'bm25', bm25: 0, score: 0 });
    }
  }

  const pooled = [...candidates.values()];
  const bm25 = bm25Scores(tokens.join(' '), pooled.map((c) => c.drawer.content));
  const fused = fusedScores(query, pooled.map((c, i) => ({ similarity: 1 - c.distance, bm25: bm25[i]!, kind: drawerKind(c.drawer.meta), place: exchangePlace(c.drawer.meta), sessionDate: sessionDate(c.drawer.meta) })));
  pooled.forEach((c, i) => {
    c.bm25 = bm25[i]!;
    c.score = fused[i]!;
  });
  // Ties: the more recently filed drawer first, then the id, so both profiles agree exactly.
  pooled.sort((a, b) => b.score - a.score || (b.drawer.meta.filed_at ?? '').localeCompare(a.drawer.meta.filed_at ?? '') || (a.drawer.id < b.drawer.id ? -1 : a.drawer.id > b.drawer.id ? 1 : 0));

  const results = foldCopies(pooled).slice(0, limit);
  const available = await ctx.drawers.count(filter);
  const result: SearchResult = {
    query,
    filters: { wing: wing ?? null, room: room ?? null, source_file: sourceFile ?? null, since: window.since ?? null, before: window.before ?? null },
    candidate_strategy: strategy,
    results,
    total_before_filter: vectorHits.length,
    available_in_scope: available,
  };
  if (sanitized.method !== 'passthrough') {
    result.query_sanitized = true;
    result.sanitizer = { method: sanitized.method, original_length: sanitized.originalLength, clean_length: codePointLength(query), clean_query: query };
  }
  if (typeof input.context === 'string' && input.context.trim() !== '') result.context_received = true;
  return result;
}
