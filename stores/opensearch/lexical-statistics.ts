/**
 * The corpus statistics the FTS5 ranking of lexical candidates needs (lexical-rank.ts), read
 * exactly and cheaply, without an aggregation over every row per query:
 *
 * - rows: the live document count (`track_total_hits`);
 * - documents holding each query token: one term count per token (Lucene answers it from the
 *   term's document frequency, or its postings when the segment has deletions);
 * - total tokens (Σ `lexical_length`): the one statistic that needs every row. It is summed once
 *   and kept with the index's change mark, (index, live rows, highest live `_seq_no`), and summed
 *   again only when that mark moves. Any write moves it: an insert or update adds a live document
 *   with a sequence number above every earlier one, and a delete alone lowers the row count, so
 *   an unchanged mark means an unchanged set of live documents. The mark is exact on one shard,
 *   which is what the drawer mapping creates (drawer-mapping.ts).
 *
 * All of it is one `_msearch`: the mark, the row count and the token counts together, plus the
 * sum when no mark is known yet.
 */
import type { CorpusStats } from './lexical-rank.js';
import type { OpenSearchDrawerIndices, SearchBody } from './drawer-indices.js';

/** Live rows and the highest live sequence number, with the token sum when asked (one searcher). */
function markSearch(withSum: boolean): Record<string, unknown> {
  return {
    size: 1,
    _source: false,
    track_total_hits: true,
    query: { match_all: {} },
    sort: [{ _seq_no: 'desc' }],
    ...(withSum ? { aggs: { tokens: { sum: { field: 'lexical_length' } } } } : {}),
  };
}

function markOf(res: SearchBody<never>): { mark: string; rows: number } {
  const rows = res.hits.total?.value ?? 0;
  const top = res.hits.hits[0];
  return { mark: `${top?._index ?? ''}:${rows}:${String(top?.sort?.[0] ?? -1)}`, rows };
}

const tokenSum = (res: SearchBody<never>) => (res.aggregations as { tokens: { value: number } }).tokens.value;

export class LexicalStatistics {
  private cached: { mark: string; tokens: number } | undefined;
  private rowsAtLastRead: number | undefined;

  constructor(private readonly base: OpenSearchDrawerIndices) {}

  /** The palace's live rows at the last read, undefined before the first. */
  get lastRows(): number | undefined {
    return this.rowsAtLastRead;
  }

  /** Rows, total tokens and each term's document frequency (terms already case-folded). */
  async read(terms: readonly string[]): Promise<CorpusStats> {
    return this.fromAnswers(await this.base.msearch<never>(this.base.drawers, this.searches(terms)));
  }

  /** The searches of `read(terms)`, for a caller that sends them with others in one `_msearch`. */
  searches(terms: readonly string[]): Record<string, unknown>[] {
    return [markSearch(this.cached === undefined), ...terms.map((t) => ({ size: 0, track_total_hits: true, query: { term: { lexical: t } } }))];
  }

  /** The statistics from the answers to `searches(terms)`, in order (one more search when the index changed). */
  async fromAnswers([head, ...counts]: readonly SearchBody<never>[]): Promise<CorpusStats> {
    const { mark, rows } = markOf(head!);
    this.rowsAtLastRead = rows;
    const summed = (head!.aggregations as { tokens?: { value: number } } | undefined)?.tokens;
    if (summed !== undefined) this.cached = { mark, tokens: summed.value };
    else if (this.cached?.mark !== mark) {
      const fresh = await this.base.search<never>(this.base.drawers, markSearch(true));
      this.cached = { mark: markOf(fresh).mark, tokens: tokenSum(fresh) };
    }
    return { rows, tokens: this.cached.tokens, documentFrequency: counts.map((r) => r.hits.total?.value ?? 0) };
  }
}
