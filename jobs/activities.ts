/**
 * The job activities bound to their dependencies: one object that the local runner calls
 * directly and the Temporal worker registers as its activities.
 */
import { invalidArgument } from '../core/errors.js';
import type { Cancellable } from './cancellation.js';
import type { DeleteBySourceActivities } from './delete-by-source/types.js';
import type { MineActivities } from './mine/types.js';
import type { SyncActivities } from './sync/types.js';
import type { ReembedActivities } from './reembed/orchestration.js';
import type { RevertActivities } from './revert/orchestration.js';
import { deleteBySourceApply, deleteBySourceCount } from './delete-by-source/activities.js';
import type { ActivityDeps } from './activity-deps.js';
import { finishMine } from './mine/finish.js';
import { gitLimitsOf, hardenedGit } from './source/git.js';
import { GitWorkspace } from './source/git-workspace.js';
import { EntityRegistryLabels } from './mine/labels.js';
import { mineBatch, scanSource } from './mine/activities.js';
import { createReembedActivities } from './reembed/activities.js';
import { createRevertActivities } from './revert/activities.js';
import { syncApply, syncScan } from './sync/activities.js';

export type JobActivities = Cancellable<MineActivities & SyncActivities & DeleteBySourceActivities & ReembedActivities & RevertActivities>;

/** `git` replaces the workspace built from `deps.workspace` (tests that count git commands). */
export function createJobActivities(deps: ActivityDeps, git?: GitWorkspace): JobActivities {
  const mine = { ...deps, labels: new EntityRegistryLabels(deps.config.entityRegistryFile, deps.config.entityLanguages),
    git: git ?? new GitWorkspace(deps.workspace, deps.config.gitWorkspaceBytes, hardenedGit(gitLimitsOf(deps.config))) };
  const embedderFor = deps.embedderFor ?? ((model: string) => {
    if (model === deps.embedder.model) return deps.embedder;
    throw invalidArgument('model', 'known_model', `this process embeds with ${deps.embedder.model} only, not ${model}`);
  });
  return {
    ...createReembedActivities({ stores: deps.stores, embedderFor }),
    ...createRevertActivities(deps),
    scanSource: (input, signal) => scanSource(mine, input, signal),
    mineBatch: (input, signal) => mineBatch(mine, input, signal),
    finishMine: (input) => finishMine(deps, input),
    syncScan: (input) => syncScan(deps, input),
    syncApply: (input) => syncApply(deps, input),
    deleteBySourceCount: (input) => deleteBySourceCount(deps, input),
    deleteBySourceApply: (input) => deleteBySourceApply(deps, input),
  };
}
