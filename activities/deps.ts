/** What the job activities need, built once per worker by the composition root. */
import type { Config } from '../core/config.js';
import type { Embedder } from '../embed/embedder.js';
import type { PalaceStores } from '../stores/open.js';

export interface ActivityDeps {
  config: Config;
  stores: Pick<PalaceStores, 'drawers' | 'graph' | 'locks' | 'jobs'>;
  embedder: Embedder;
  /** Directory where git sources are cloned for this worker. */
  workspace: string;
  /** An embedder of another model, for `mempalace reembed`; without it only `embedder`'s model. */
  embedderFor?: (model: string) => Embedder;
}
