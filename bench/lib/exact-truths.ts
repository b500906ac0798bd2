/**
 * The exact top 20 of query vectors over a corpus's vectors (streamed or held), per filter
 * case of the benches (no filter, the 95 % wing, the 2 % room), in one streamed pass: the truth that
 * recall@20 is measured against.
 */
import { dot } from '../../core/vector.js';

export type FilterCase = 'none' | 'wing95' | 'room2';

/**
 * One query's exact top 20: their ids, and the 20th distance. Rows tied with the 20th are as right
 * as the one the scan kept (real text repeats: licence headers, copies of a file in several
 * packages), so a hit counts when it is among the ids or no farther than the 20th.
 */
export interface Truth {
  ids: Set<string>;
  kth: number;
}

/** Slack on the 20th distance for a hit whose distance the engine or the adapter computed in another order. */
const TIE = 1e-6;

/** The hits of `found` that belong to the exact top 20 (`distance` when known: see `Truth`). */
export function correctHits(truth: Truth, found: readonly { id: string; distance?: number }[]): number {
  return found.filter((h) => truth.ids.has(h.id) || (h.distance !== undefined && h.distance <= truth.kth + TIE)).length;
}

/** Exact top 20 of each query vector per filter case, in one streamed pass over the rows' vectors. */
export function exactTruths(
  rows: Iterable<{ wing: string; room: string; id: string; embedding: Float32Array }>,
  queries: readonly Float32Array[],
): Record<FilterCase, Truth[]> {
  const best = { none: queries.map(() => [] as { id: string; d: number }[]), wing95: queries.map(() => [] as { id: string; d: number }[]),
    room2: queries.map(() => [] as { id: string; d: number }[]) };
  const keep = (list: { id: string; d: number }[], id: string, d: number) => {
    if (list.length === 20 && d >= list[19]!.d) return;
    list.push({ id, d });
    list.sort((a, b) => a.d - b.d);
    if (list.length > 20) list.pop();
  };
  for (const row of rows) {
    for (const [q, vector] of queries.entries()) {
      const d = 1 - dot(row.embedding, vector);
      keep(best.none[q]!, row.id, d);
      if (row.wing === 'common') keep(best.wing95[q]!, row.id, d);
      if (row.room === 'room_7') keep(best.room2[q]!, row.id, d);
    }
  }
  const truths = (lists: { id: string; d: number }[][]) => lists.map((l) => ({ ids: new Set(l.map((x) => x.id)), kth: l[l.length - 1]?.d ?? Infinity }));
  return { none: truths(best.none), wing95: truths(best.wing95), room2: truths(best.room2) };
}
