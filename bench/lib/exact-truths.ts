/**
 * The exact top 20 of query vectors over a corpus's vectors (streamed or held), per filter
 * case of the benches (no filter, the 95 % wing, the 2 % room), in one streamed pass: the truth that
 * recall@20 is measured against.
 */
import { dot } from '../../core/vector.js';

export type FilterCase = 'none' | 'wing95' | 'room2';

/** Exact top-20 ids of each query vector per filter case, in one streamed pass over the rows' vectors. */
export function exactTruths(
  rows: Iterable<{ wing: string; room: string; id: string; embedding: Float32Array }>,
  queries: readonly Float32Array[],
): Record<FilterCase, Set<string>[]> {
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
  const ids = (lists: { id: string }[][]) => lists.map((l) => new Set(l.map((x) => x.id)));
  return { none: ids(best.none), wing95: ids(best.wing95), room2: ids(best.room2) };
}
