/**
 * Resolving a job's source to a directory this worker can read: a local directory (checked
 * against the allowed roots) or a git repository at a ref, cloned or fetched into the worker's
 * workspace. For git sources the commit actually checked out is returned and recorded.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { PalaceError, invalidArgument } from '../core/errors.js';
import { hashN } from '../core/text.js';
import type { SourceSpec } from '../palace/jobs.js';
import { assertWithinRoots } from '../palace/jobs.js';

const run = promisify(execFile);

export interface ResolvedSource {
  /** Directory holding the files. */
  root: string;
  /** Identity used in drawer ids and locks: absolute directory or repository URL. */
  identity: string;
  /** Stored `source_file` of a file at `relativePath`. */
  storedPath(relativePath: string, absolutePath: string): string;
  commit?: string;
}

async function git(args: string[], cwd?: string): Promise<string> {
  try {
    const { stdout } = await run('git', args, { cwd, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
    return stdout.trim();
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new PalaceError('invalid_argument', `git ${args[0]} failed: ${(err.stderr ?? err.message).trim()}`, { field: 'source', rule: 'git', cause: e });
  }
}

export async function resolveSource(source: SourceSpec, opts: { allowedRoots: readonly string[]; workspace: string; allowFile?: boolean }): Promise<ResolvedSource> {
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
  const dir = path.join(opts.workspace, hashN(source.url, 16));
  await fs.mkdir(opts.workspace, { recursive: true });
  const exists = await fs.stat(path.join(dir, '.git')).then(() => true, () => false);
  if (!exists) {
    await fs.rm(dir, { recursive: true, force: true });
    await git(['clone', '--quiet', '--no-checkout', source.url, dir]);
  } else {
    await git(['fetch', '--quiet', '--tags', '--force', 'origin', '+refs/heads/*:refs/remotes/origin/*'], dir);
  }
  const candidates = [`origin/${source.ref}`, source.ref];
  let commit: string | undefined;
  for (const c of candidates) {
    commit = await git(['rev-parse', '--verify', '--quiet', `${c}^{commit}`], dir).catch(() => undefined);
    if (commit) break;
  }
  if (!commit) throw invalidArgument('ref', 'git_ref_exists', `ref '${source.ref}' not found in ${source.url}`);
  await git(['checkout', '--quiet', '--force', '--detach', commit], dir);
  await git(['clean', '--quiet', '-fdx'], dir);
  return { root: dir, identity: source.url, storedPath: (rel) => `${source.url}:${rel}`, commit };
}
