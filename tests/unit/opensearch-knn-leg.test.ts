/**
 * The HNSW candidates an approximate knn search asks OpenSearch for: the palace's `efSearch`
 * (MEMPALACE_OPENSEARCH_EF_SEARCH) or the adapter's default, never fewer than k, never above the
 * engine's ceiling; and a palace small enough for an exact search asks for the exact page instead.
 */
import { describe, expect, it } from 'vitest';
import { EF_SEARCH, ENGINE_MAX, knnLeg } from '../../stores/opensearch/knn-leg.js';

const DIM = 4;
const vector = new Float32Array([1, 0, 0, 0]);
const engineK = (leg: ReturnType<typeof knnLeg>) => (leg.first()[1] as { query: { knn: { embedding: { k: number } } } }).query.knn.embedding.k;

describe('knn leg: HNSW candidates', () => {
  it('asks for the default ef when the palace sets none', () => {
    expect(engineK(knnLeg(DIM, vector, 20, [], 1_000_000))).toBe(EF_SEARCH);
  });

  it("asks for the palace's ef, at least k and at most the engine's ceiling", () => {
    expect(engineK(knnLeg(DIM, vector, 20, [], 1_000_000, 300))).toBe(300);
    expect(engineK(knnLeg(DIM, vector, 500, [], 1_000_000, 300))).toBe(500);
    expect(engineK(knnLeg(DIM, vector, 20, [], 1_000_000, ENGINE_MAX + 1))).toBe(ENGINE_MAX);
  });

  it('asks for every row of a palace small enough to search exactly, whatever the ef', () => {
    expect(engineK(knnLeg(DIM, vector, 20, [], 50, 300))).toBeGreaterThan(300);
  });
});
