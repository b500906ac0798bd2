/**
 * Resolving a job's source to a directory this worker can read, with the source policy checked
 * again here (the worker may see another filesystem, or another DNS, than the entry point): a
 * local directory at its canonical real path, or a git repository at a ref, checked out once per
 * commit in the worker's git workspace (jobs/source/git-workspace.ts) through the hardened git
 * runner (jobs/source/git.ts). For git sources the commit actually checked out is returned and
 * recorded.
 */
import type { SourceSpec } from '../job.js';
import type { GitTarget, SourcePolicy } from '../../palace/sources/sources.js';
import { assertGitRef, resolveGitSource, resolveLocalSource } from '../../palace/sources/sources.js';
import type { SourceCredentials } from '../../stores/ports/source-credentials.js';
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
  /** The palace's kept credentials, offered to git for https sources that have one. */
  credentials?: Pick<SourceCredentials, 'get'> | undefined;
  allowFile?: boolean;
}

/** The target with its kept credential, looked up by the URL without credential. */
export async function withKeptCredential(target: GitTarget, credentials: Pick<SourceCredentials, 'get'> | undefined): Promise<GitTarget> {
  if (target.transport !== 'https' || target.credential || !credentials) return target;
  const credential = await credentials.get(target.url);
  return credential ? { ...target, credential } : target;
}

export async function resolveSource(source: SourceSpec, opts: SourceOptions): Promise<ResolvedSource> {
  if (source.kind === 'dir') {
    const root = await resolveLocalSource('source', source.path, opts.policy, { allowFile: opts.allowFile === true });
    return { root, identity: root };
  }
  assertGitRef('ref', source.ref);
  const target = await withKeptCredential(await resolveGitSource('source', source.url, opts.policy), opts.credentials);
  const { dir, commit } = await opts.workspace.checkout(target, source.ref);
  // An https URL written with a credential (a spec made before credentials were split off) is known without it.
  return { root: dir, identity: target.transport === 'https' ? target.url : source.url, commit };
}
