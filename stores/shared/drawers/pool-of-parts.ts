/**
 * A candidate pool (DrawerIndex.candidatePool) from the index's separate calls, one after the
 * other: what the embedded adapter does (each call is a local query, so nothing is gained by
 * merging them) and what a wrapper of the port does when it narrows each call itself.
 */
import { cosineDistance } from '../../../core/vector.js';
import type { CandidatePool, DrawerIndex, PoolRequest, VectorHit } from '../../ports/drawers/drawer-index.js';

export type PoolParts = Pick<DrawerIndex, 'knn' | 'lexical' | 'embeddings' | 'count'>;

export async function poolOfParts(index: PoolParts, request: PoolRequest): Promise<CandidatePool> {
  const { vector, k, filter } = request;
  const hits = await index.knn(vector, k, filter);
  const tokens = request.lexicalTokens(hits);
  const rows = tokens.length > 0 ? await index.lexical(tokens, k, filter) : [];
  const known = new Map(hits.map((h) => [h.drawer.id, h.distance]));
  const vectors = await index.embeddings(rows.filter((d) => !known.has(d.id)).map((d) => d.id));
  const lexical = rows.flatMap((drawer): VectorHit[] => {
    const v = vectors.get(drawer.id);
    const distance = known.get(drawer.id) ?? (v === undefined ? undefined : cosineDistance(vector, v));
    return distance === undefined ? [] : [{ drawer, distance }];
  });
  return { vector: hits, tokens, lexical, inScope: await index.count(filter) };
}
