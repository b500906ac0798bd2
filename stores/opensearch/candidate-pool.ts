/**
 * A union search's candidate pool on OpenSearch (DrawerIndex.candidatePool) in one `_msearch`:
 * the scope's count and the first knn page (knn-leg.ts), the lexical statistics of the tokens the
 * product would search without the vector hits (lexical-statistics.ts) and the lexical window on
 * all of them (lexical-window.ts). Then one fetch: the content and exact distance (exact-distance.ts)
 * of the lexical winners the vector leg did not return. Vectors never travel.
 *
 * The window searched first is right when, once the statistics and the vector hits are known, the
 * terms the lexical leg matches on are the same apart from terms no row holds (they add nothing to
 * any row's score, so Lucene ranks the window the same). Otherwise, when a token is in half the rows
 * or the hits drop one (a speaker name in a chat), the window is searched again, one more round
 * trip; so is a knn page the first answers did not settle (an exact search of a small scope in a
 * large palace, a widening).
 */
import type { CandidatePool, PoolRequest, VectorHit } from '../ports/drawers/drawer-index.js';
import { asciiLower } from '../shared/drawers/lexical-tokens.js';
import { checkStrings } from '../shared/drawers/port-args.js';
import { DRAWER_SOURCE, documentId, fromSource } from './drawer-documents.js';
import type { DrawerSource, OpenSearchDrawerIndices, SearchBody } from './drawer-indices.js';
import { filterClauses } from './drawer-filter-query.js';
import { distanceOfHit, exactDotField } from './exact-distance.js';
import { knnLeg } from './knn-leg.js';
import type { LexicalStatistics } from './lexical-statistics.js';
import { distinctTokens, informativeTerms, rankWindow, windowSearch } from './lexical-window.js';
import type { LexicalTerms } from './lexical-window.js';

type WindowRow = { id: string; lexical: string };

/** The terms a Lucene query scores by: those some row holds, as a sorted list. */
function scoringTerms(terms: readonly string[], frequency: ReadonlyMap<string, number>): string {
  return JSON.stringify(terms.filter((t) => (frequency.get(t) ?? 0) > 0).sort());
}

export async function openSearchCandidatePool(base: OpenSearchDrawerIndices, statistics: LexicalStatistics, request: PoolRequest): Promise<CandidatePool> {
  const { vector, k, filter } = request;
  const clauses = filterClauses(filter);
  const knn = knnLeg(base.dimension, vector, k, clauses, statistics.lastRows, base.conn.options.efSearch);
  const guessed = distinctTokens(checkStrings('tokens', request.lexicalTokens([])));
  const guessedTerms = guessed.map(asciiLower);
  const window = (terms: readonly string[]) => windowSearch(terms, clauses, k, ['id']);
  const answers = await base.msearch<never>(base.drawers, [
    ...knn.first(),
    ...(guessed.length > 0 ? [...statistics.searches(guessedTerms), window(guessedTerms)] : []),
  ]);
  const hits = await knn.finish(answers[0]!, answers[1]! as SearchBody<DrawerSource>, (body) => base.search<DrawerSource>(base.drawers, body));

  const tokens = checkStrings('tokens', request.lexicalTokens(hits));
  const pool = { vector: hits, tokens, inScope: knn.matching };
  const unique = distinctTokens(tokens);
  if (unique.length === 0) return { ...pool, lexical: [] };
  const terms = unique.map(asciiLower);
  let chosen: LexicalTerms;
  let windowRows: SearchBody<WindowRow> | undefined;
  if (guessed.length > 0 && terms.every((t) => guessedTerms.includes(t))) {
    const read = await statistics.fromAnswers(answers.slice(2, 3 + guessedTerms.length));
    const frequency = new Map(guessedTerms.map((t, i) => [t, read.documentFrequency[i]!]));
    chosen = informativeTerms(unique, { ...read, documentFrequency: terms.map((t) => frequency.get(t)!) });
    if (scoringTerms(chosen.terms, frequency) === scoringTerms(guessedTerms, frequency)) windowRows = answers[answers.length - 1] as SearchBody<WindowRow>;
  } else {
    chosen = informativeTerms(unique, await statistics.read(terms));
  }
  windowRows ??= await base.search<WindowRow>(base.drawers, window(chosen.terms));
  const winners = rankWindow(windowRows.hits.hits, chosen, k);

  const known = new Map(hits.map((h) => [h.drawer.id, h]));
  const missing = winners.filter((id) => !known.has(id));
  if (missing.length > 0) {
    const fetched = await base.search<DrawerSource>(base.drawers, {
      size: missing.length,
      query: { ids: { values: missing.map(documentId) } },
      _source: DRAWER_SOURCE,
      script_fields: exactDotField(vector),
    });
    for (const h of fetched.hits.hits) {
      const distance = distanceOfHit(h);
      if (distance !== undefined) known.set(h._source!.id, { drawer: fromSource(h._source!), distance });
    }
  }
  return { ...pool, lexical: winners.flatMap((id): VectorHit[] => {
    const hit = known.get(id);
    return hit ? [hit] : [];
  }) };
}
