/**
 * The job activities bound to their dependencies: one object that the local runner calls
 * directly and the Temporal worker registers as its activities.
 */
import { invalidArgument } from '../core/errors.js';
import type { Cancellable, DeleteBySourceActivities, MineActivities, SyncActivities } from '../workflows/activity-types.js';
import type { ReembedActivities } from '../workflows/reembed.js';
import { deleteBySourceApply, deleteBySourceCount } from './delete-by-source.js';
import type { ActivityDeps } from './deps.js';
import { finishMine } from './finish-mine.js';
import { gitLimitsOf, hardenedGit } from './git.js';
import { GitWorkspace } from './git-workspace.js';
import { EntityRegistryLabels } from './labels.js';
import { mineBatch, scanSource } from './mine.js';
import { createReembedActivities } from './reembed.js';
import { syncApply, syncScan } from './sync.js';

export type JobActivities = Cancellable<MineActivities & SyncActivities & DeleteBySourceActivities & ReembedActivities>;

/** `git` replaces the workspace built from `deps.workspace` (tests that count git commands). */
export function createJobActivities(deps: ActivityDeps, git?: GitWorkspace): JobActivities {
  const mine = { ...deps, labels: new EntityRegistryLabels(deps.config.entityRegistryFile, deps.config.entityLanguages), git: git ?? new GitWorkspace(deps.workspace, deps.config.gitWorkspaceBytes, hardenedGit(gitLimitsOf(deps.config))) };
  const embedderFor = deps.embedderFor ?? ((model: string) => {
    if (model === deps.embedder.model) return deps.embedder;
    throw invalidArgument('model', 'known_model', `this process embeds with ${deps.embedder.model} only, not ${model}`);
  });
  return {
    ...createReembedActivities({ stores: deps.stores, embedderFor }),
    scanSource: (input, signal) => scanSource(mine, input, signal),
    mineBatch: (input, signal) => mineBatch(mine, input, signal),
    finishMine: (input) => finishMine(deps, input),
    syncScan: (input) => syncScan(deps, input),
    syncApply: (input) => syncApply(deps, input),
    deleteBySourceCount: (input) => deleteBySourceCount(deps, input),
    deleteBySourceApply: (input) => deleteBySourceApply(deps, input),
  };
}
