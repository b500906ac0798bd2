/** What the job activities need, built once per worker by the composition root. */
import type { Config } from '../core/config.js';
import type { Embedder } from '../embed/embedder.js';
import type { PalaceStores } from '../stores/ports/palace-stores.js';

export interface ActivityDeps {
  config: Config;
  /**
   * `credentials`: the kept source credentials; stores without any (test stores) clone without one.
   * `audit` and `logstream`: what a revert reads and announces on; stores without them run no revert.
   */
  stores: Pick<PalaceStores, 'drawers' | 'graph' | 'locks' | 'jobs'> & Partial<Pick<PalaceStores, 'credentials' | 'audit' | 'logstream'>>;
  embedder: Embedder;
  /** Directory of this worker's git workspace (jobs/source/git-workspace.ts). */
  workspace: string;
  /** An embedder of another model, for `mempalace reembed`; without it only `embedder`'s model. */
  embedderFor?: (model: string) => Embedder;
}
