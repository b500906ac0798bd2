/**
 * Resolving a job's source to a directory this worker can read, with the source policy checked
 * again here (the worker may see another filesystem, or another DNS, than the entry point): a
 * local directory at its canonical real path, or a git repository at a ref, cloned or fetched
 * into the worker's workspace through the hardened git runner. For git sources the commit
 * actually checked out is returned and recorded.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { invalidArgument } from '../core/errors.js';
import { hashN } from '../core/text.js';
import type { SourceSpec } from '../palace/jobs.js';
import type { SourcePolicy } from '../palace/sources.js';
import { assertGitRef, resolveGitSource, resolveLocalSource } from '../palace/sources.js';
import type { GitLimits } from './git.js';
import { runGit } from './git.js';

export interface ResolvedSource {
  /** Canonical directory (or, in convos mode, file) holding the files. */
  root: string;
  /** Identity used in drawer ids and locks: absolute directory or repository URL. */
  identity: string;
  commit?: string;
}

export interface SourceOptions {
  policy: SourcePolicy;
  workspace: string;
  git: GitLimits;
  allowFile?: boolean;
}

export async function resolveSource(source: SourceSpec, opts: SourceOptions): Promise<ResolvedSource> {
  if (source.kind === 'dir') {
    const root = await resolveLocalSource('source', source.path, opts.policy, { allowFile: opts.allowFile === true });
    return { root, identity: root };
  }
  assertGitRef('ref', source.ref);
  const target = await resolveGitSource('source', source.url, opts.policy);
  const dir = path.join(opts.workspace, hashN(source.url, 16));
  await fs.mkdir(opts.workspace, { recursive: true });
  const git = (args: string[], extra: { cwd?: string; capDir?: string } = {}) => runGit({ args, target, limits: opts.git, ...extra });
  const exists = await fs.stat(path.join(dir, '.git')).then(() => true, () => false);
  let commit: string | undefined;
  try {
    if (!exists) {
      await fs.rm(dir, { recursive: true, force: true });
      await git(['clone', '--quiet', '--no-checkout', '--', target.url, dir], { capDir: dir });
    } else {
      await git(['fetch', '--quiet', '--tags', '--force', '--', target.url, '+refs/heads/*:refs/remotes/origin/*'], { cwd: dir, capDir: dir });
    }
    for (const c of [`origin/${source.ref}`, source.ref]) {
      commit = await git(['rev-parse', '--verify', '--quiet', `${c}^{commit}`], { cwd: dir }).catch(() => undefined);
      if (commit) break;
    }
    if (!commit) throw invalidArgument('ref', 'git_ref_exists', `ref '${source.ref}' not found in ${source.url}`);
    await git(['checkout', '--quiet', '--force', '--detach', commit], { cwd: dir, capDir: dir });
    await git(['clean', '--quiet', '-fdx'], { cwd: dir });
  } catch (e) {
    // A half-made clone, or one stopped by the size cap or the timeout, is not kept.
    const rule = (e as { rule?: string }).rule;
    if (!exists || rule === 'git_max_bytes' || rule === 'git_timeout') await fs.rm(dir, { recursive: true, force: true });
    throw e;
  }
  return { root: await fs.realpath(dir), identity: source.url, commit };
}
