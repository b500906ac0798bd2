/**
 * Deterministic synthetic drawers for the DrawerIndex contract suite: seeded unit vectors (no
 * model needed), clustered the way real embeddings are, and a brute-force reference search.
 */
import { filedAtNow } from '../../core/drawer.js';
import type { DrawerMeta, DrawerWrite } from '../../core/drawer.js';
import { dot } from '../../core/vector.js';

/** mulberry32: a small seeded PRNG, enough for reproducible test vectors. */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let x = Math.imul(s ^ (s >>> 15), 1 | s);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

function gaussian(rnd: () => number): number {
  return Math.sqrt(-2 * Math.log(rnd() + 1e-12)) * Math.cos(2 * Math.PI * rnd());
}

export function normalise(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n);
  return v.map((x) => x / n);
}

export function randomUnitVector(rnd: () => number, dimension: number): Float32Array {
  return normalise(Float32Array.from({ length: dimension }, () => gaussian(rnd)));
}

/** A unit vector near `center` (noise 0.06 per coordinate, like sentences on one topic). */
export function nearVector(rnd: () => number, center: Float32Array, noise = 0.06): Float32Array {
  return normalise(center.map((x) => x + noise * gaussian(rnd)));
}

/** `filed_at` i minutes after 2026-01-01T00:00:00Z, in the stored UTC format. */
export function filedAt(minutes: number): string {
  return filedAtNow(new Date(Date.UTC(2026, 0, 1) + minutes * 60_000));
}

export function drawer(id: string, content: string, embedding: Float32Array, meta: Partial<DrawerMeta> = {}): DrawerWrite {
  return {
    id,
    content,
    embedding,
    meta: { wing: 'wing_a', room: 'room_a', source_file: '', chunk_index: 0, added_by: 'contract', filed_at: filedAt(0), ...meta },
  };
}

/** Ids of the `k` rows nearest to `q` by exact cosine distance. */
export function bruteForce(rows: readonly DrawerWrite[], q: Float32Array, k: number): { id: string; distance: number }[] {
  return rows
    .map((r) => ({ id: r.id, distance: 1 - dot(r.embedding, q) }))
    .sort((a, b) => a.distance - b.distance)
    .slice(0, k);
}

/** Code-point order, the order both engines sort keyword text in. */
export function codePointCompare(a: string, b: string): number {
  const x = [...a].map((c) => c.codePointAt(0)!);
  const y = [...b].map((c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}
