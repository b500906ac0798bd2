/**
 * The exact cosine distance of a returned row to the query vector, computed by OpenSearch instead
 * of shipping the row's vector back as JSON (384 numbers, ~7 KB a row). A script field runs in the
 * fetch phase, for the returned rows only, and takes the dot product in doubles over the float32
 * values, in index order, the arithmetic of core/vector.ts `dot`: each product of two float32
 * values is exact in a double and the sums round the same way, so the number that comes back is
 * the one the embedded profile computes, bit for bit. (The engine's own `_score` is a float32
 * cosine and differs in the seventh digit.) The vector is read from `_source`, which derived source
 * fills from the flat vector file; its numbers are cut to float32 first because derived source
 * writes each float in its shortest decimal form, which a double parse does not round-trip.
 */
import { distanceOfDot } from '../../core/vector.js';
import type { Hit } from './drawer-indices.js';

const FIELD = 'query_dot';

const SOURCE = [
  'def v = params._source.embedding;',
  'def q = params.query;',
  'if (v == null || v.size() != q.size()) return null;',
  'double s = 0;',
  'for (int i = 0; i < q.size(); i++) s += (double) ((Number) v.get(i)).floatValue() * (double) ((Number) q.get(i)).floatValue();',
  'return s;',
].join(' ');

/** The `script_fields` entry that returns each hit's dot product with `vector`. */
export function exactDotField(vector: Float32Array): Record<string, unknown> {
  return { [FIELD]: { script: { lang: 'painless', source: SOURCE, params: { query: Array.from(vector) } } } };
}

/** The hit's cosine distance to the vector of `exactDotField`, undefined when the row has no vector. */
export function distanceOfHit(hit: Hit<unknown>): number | undefined {
  const value = hit.fields?.[FIELD]?.[0];
  return typeof value === 'number' ? distanceOfDot(value) : undefined;
}
