/** Arithmetic on unit-length embedding vectors, shared by the stores and the rerank. */

export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** Cosine distance of two unit vectors, clamped to the metric's range [0, 2]. */
export function cosineDistance(a: Float32Array, b: Float32Array): number {
  return distanceOfDot(dot(a, b));
}

/** The cosine distance of two unit vectors whose `dot` is given (computed elsewhere in the same arithmetic). */
export function distanceOfDot(d: number): number {
  return Math.min(2, Math.max(0, 1 - d));
}
