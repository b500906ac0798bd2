/** What the job activities need, built once per worker by the composition root. */
import type { Config } from '../core/config.js';
import type { Embedder } from '../embed/embedder.js';
import type { PalaceStores } from '../stores/palace-stores.js';

export interface ActivityDeps {
  config: Config;
  stores: Pick<PalaceStores, 'drawers' | 'graph' | 'locks' | 'jobs'>;
  embedder: Embedder;
  /** Directory of this worker's git workspace (activities/git-workspace.ts). */
  workspace: string;
  /** An embedder of another model, for `mempalace reembed`; without it only `embedder`'s model. */
  embedderFor?: (model: string) => Embedder;
}
