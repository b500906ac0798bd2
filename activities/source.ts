/**
 * Resolving a job's source to a directory this worker can read, with the source policy checked
 * again here (the worker may see another filesystem, or another DNS, than the entry point): a
 * local directory at its canonical real path, or a git repository at a ref, checked out once per
 * commit in the worker's git workspace (activities/git-workspace.ts) through the hardened git
 * runner (activities/git.ts). For git sources the commit actually checked out is returned and
 * recorded.
 */
import type { SourceSpec } from '../palace/jobs.js';
import type { SourcePolicy } from '../palace/sources.js';
import { assertGitRef, resolveGitSource, resolveLocalSource } from '../palace/sources.js';
import type { GitWorkspace } from './git-workspace.js';

export interface ResolvedSource {
  /** Canonical directory (or, in convos mode, file) holding the files. */
  root: string;
  /** Identity used in drawer ids and locks: absolute directory or repository URL. */
  identity: string;
  commit?: string;
}

export interface SourceOptions {
  policy: SourcePolicy;
  workspace: GitWorkspace;
  allowFile?: boolean;
}

export async function resolveSource(source: SourceSpec, opts: SourceOptions): Promise<ResolvedSource> {
  if (source.kind === 'dir') {
    const root = await resolveLocalSource('source', source.path, opts.policy, { allowFile: opts.allowFile === true });
    return { root, identity: root };
  }
  assertGitRef('ref', source.ref);
  const target = await resolveGitSource('source', source.url, opts.policy);
  const { dir, commit } = await opts.workspace.checkout(target, source.ref);
  return { root: dir, identity: source.url, commit };
}
