/**
 * The palace model record port: which embedding model the palace's vectors come from, kept by the
 * drawer store beside the vectors. Implemented by `embedded/drawers/` and `opensearch/`.
 */
import type { ModelIdentity } from '../../../embed/model-identity.js';

/**
 * Which model's vectors a palace holds (palace/drawers/palace-model.ts gives it its meaning): recorded
 * when the palace is first opened by a process that embeds, rewritten only by `mempalace reembed`.
 */
export interface PalaceModelRecord {
  model: ModelIdentity;
  /** A re-embed under way: every vector is being rewritten with `target` by job `jobId`. */
  reembed?: { target: ModelIdentity; jobId: string };
}

export interface PalaceModelStore {
  /** The palace's model record, or undefined when none was written yet. */
  readModel(): Promise<PalaceModelRecord | undefined>;
  /**
   * Writes `next` only when the stored record equals `expected` (undefined: none stored yet), as
   * one atomic compare-and-set; returns whether it wrote.
   */
  writeModel(next: PalaceModelRecord, expected: PalaceModelRecord | undefined): Promise<boolean>;
}
