/**
 * The Embedder port: turns texts into unit-length vectors. `palace/` and the activities depend on
 * this interface only; the composition root picks the implementation (embed/minilm.ts).
 */
import type { ModelIdentity } from './model-identity.js';

/** Per-call options of `Embedder.embed`. */
export interface EmbedOptions {
  /**
   * Stops the call: once it aborts, the promise rejects with a `cancelled` PalaceError and no
   * further model run starts for these texts (the run in progress, a fraction of a second, ends).
   */
  signal?: AbortSignal | undefined;
}

export interface Embedder {
  /** Model name recorded with stored vectors, e.g. `all-MiniLM-L6-v2`. */
  readonly model: string;
  /** Length of every vector `embed` returns. */
  readonly dimension: number;
  /** Name, dimension and weights checksum of the model these vectors come from. */
  readonly identity: ModelIdentity;
  /**
   * One vector per text, in input order, each with L2 norm 1 (cosine similarity = dot product).
   * An empty input gives an empty result.
   */
  embed(texts: string[], options?: EmbedOptions): Promise<Float32Array[]>;
  /** Releases the model when no other embedder in the process still uses it. Idempotent. */
  close(): Promise<void>;
}
