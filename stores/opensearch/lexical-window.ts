/**
 * The lexical leg's window on OpenSearch: Lucene's BM25 over the query's informative terms
 * (same k1 and b as FTS5) picks a window of rows, which come back with their stored token streams,
 * and the FTS5 function (lexical-rank.ts) picks k from it. Every match takes part up to the
 * window's size; beyond, a row Lucene ranks below the window cannot be chosen (both rank by BM25
 * with k1 1.2, b 0.75, so the FTS5 top k lies far inside it in practice). Reading a window row
 * cost 0.1–0.25 ms on the 2-core test machine, hence not more.
 */
import type { CorpusStats } from './lexical-rank.js';
import { lexicalMatch, rankLikeFts5 } from './lexical-rank.js';
import type { Hit } from './drawer-indices.js';
import type { FilterClause } from './drawer-filter-query.js';
import { ENGINE_MAX } from './knn-leg.js';
import { asciiLower, informativeTokenPositions } from '../shared/drawers/lexical-tokens.js';

const LEXICAL_WINDOW_MIN = 200;
const LEXICAL_WINDOW_PER_K = 10;

/** The terms a lexical fetch matches on and the statistics its ranking reads. */
export interface LexicalTerms {
  terms: string[];
  stats: CorpusStats;
}

/** The distinct non-blank tokens, in order. */
export function distinctTokens(tokens: readonly string[]): string[] {
  return [...new Set(tokens.filter((t) => t.trim() !== ''))];
}

/** The informative terms of `unique` (lexical-tokens.ts) given the statistics of all of them. */
export function informativeTerms(unique: readonly string[], all: CorpusStats): LexicalTerms {
  const kept = informativeTokenPositions(all.documentFrequency, all.rows);
  return { terms: kept.map((i) => asciiLower(unique[i]!)), stats: { ...all, documentFrequency: kept.map((i) => all.documentFrequency[i]!) } };
}

/** The window search over `terms` within the filter, returning `fields` of each row besides its token stream. */
export function windowSearch(terms: readonly string[], clauses: FilterClause[], k: number, fields: readonly string[]): Record<string, unknown> {
  return {
    size: Math.min(ENGINE_MAX, Math.max(LEXICAL_WINDOW_MIN, k * LEXICAL_WINDOW_PER_K)),
    _source: [...fields, 'lexical'],
    query: { bool: { filter: clauses, should: terms.map((t) => ({ term: { lexical: t } })), minimum_should_match: 1 } },
    sort: [{ _score: 'desc' }, { id: 'asc' }],
  };
}

/** The ids of the k best window rows in FTS5 `bm25()` order, each row's length and term counts read from its own token stream. */
export function rankWindow(hits: readonly Hit<{ id: string; lexical: string }>[], { terms, stats }: LexicalTerms, k: number): string[] {
  return rankLikeFts5(hits.map((h) => lexicalMatch(h._source!.id, h._source!.lexical, terms)), stats, k).map((m) => m.id);
}
