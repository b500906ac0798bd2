/**
 * Resolving a job's source to a directory this worker can read: a local directory (checked
 * against the allowed roots) or a git repository at a ref, checked out once per commit in the
 * worker's git workspace (activities/git-workspace.ts). For git sources the commit actually
 * checked out is returned and recorded.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { invalidArgument } from '../core/errors.js';
import type { SourceSpec } from '../palace/jobs.js';
import { assertWithinRoots } from '../palace/jobs.js';
import type { GitWorkspace } from './git-workspace.js';

export interface ResolvedSource {
  /** Directory holding the files. */
  root: string;
  /** Identity used in drawer ids and locks: absolute directory or repository URL. */
  identity: string;
  /** Stored `source_file` of a file at `relativePath`. */
  storedPath(relativePath: string, absolutePath: string): string;
  commit?: string;
}

export async function resolveSource(source: SourceSpec, opts: { allowedRoots: readonly string[]; git: GitWorkspace; allowFile?: boolean }): Promise<ResolvedSource> {
  if (source.kind === 'dir') {
    const abs = path.resolve(source.path.replace(/^~(?=$|\/)/, process.env.HOME ?? '~'));
    assertWithinRoots(abs, opts.allowedRoots);
    const stat = await fs.stat(abs).catch(() => undefined);
    if (!stat || !(stat.isDirectory() || (opts.allowFile && stat.isFile()))) {
      throw invalidArgument('source', 'existing_directory', `source directory not found: '${source.path}'`);
    }
    const root = await fs.realpath(abs);
    return { root, identity: root, storedPath: (_rel, absolute) => absolute };
  }
  if (!/^[0-9A-Za-z][\w./-]*$/.test(source.ref) || source.ref.includes('..')) throw invalidArgument('ref', 'git_ref', `ref '${source.ref}' is not a valid git ref`);
  const { dir, commit } = await opts.git.checkout(source.url, source.ref);
  return { root: dir, identity: source.url, storedPath: (rel) => `${source.url}:${rel}`, commit };
}
