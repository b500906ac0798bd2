/**
 * The file walk of projects-mode mining (docs/palace-behaviour.md §4.2, §4.3) over a project
 * directory, by the rules of core/scan.ts: paths come out in code-point order of the
 * project-relative POSIX path, and every candidate file's first 8 KiB are sniffed.
 */
import type { Dirent } from 'node:fs';
import { constants } from 'node:fs';
import { lstat, open, readFile, readdir, realpath, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { invalidArgument } from '../../core/errors.js';
import type { GitignoreCache, Matcher, ScanEntry, ScanOptions } from '../../core/scan.js';
import { DEFAULT_MAX_FILE_BYTES, MINED_EXTENSIONS, SKIP_DIRS, SKIP_FILES, SNIFF_BYTES, compareCodePoints, gitignoreMatcher, isIgnored, normaliseIncludePaths,
  sniffBytes } from '../../core/scan.js';

async function loadGitignore(dirAbs: string, base: string): Promise<Matcher | null> {
  let text: string;
  try {
    // toString('utf8') replaces invalid bytes, as docs/palace-behaviour.md §4.3 asks.
    text = (await readFile(join(dirAbs, '.gitignore'))).toString('utf8');
  } catch {
    return null;
  }
  return gitignoreMatcher(text, base);
}

/**
 * Whether the `.gitignore` files of `root` and of the directories down to the file ignore the
 * file at `relativePath` (POSIX, relative to `root`), or one of its directories; the same rules
 * the scan applies. Pass one `cache` across calls to read each `.gitignore` once.
 */
export async function isGitignored(root: string, relativePath: string, cache: GitignoreCache = new Map()): Promise<boolean> {
  const parts = relativePath.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.length === 0 || parts.includes('..')) return false;
  const matchers: Matcher[] = [];
  for (let depth = 0; depth < parts.length; depth++) {
    const base = parts.slice(0, depth).join('/');
    if (!cache.has(base)) cache.set(base, await loadGitignore(join(root, ...parts.slice(0, depth)), base));
    const m = cache.get(base);
    if (m) matchers.push(m);
    const rel = parts.slice(0, depth + 1).join('/');
    const isDir = depth < parts.length - 1;
    if (isIgnored(matchers, rel, isDir)) return true;
  }
  return false;
}

async function sniffFile(absolutePath: string, size: number): Promise<{ reason: 'binary' | 'not_utf8'; detail: string } | null> {
  // A file swapped for a link or a FIFO since the listing is not followed, nor waited on.
  const handle = await open(absolutePath, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const buf = new Uint8Array(Math.min(size, SNIFF_BYTES));
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    return sniffBytes(buf.subarray(0, bytesRead), bytesRead >= size);
  } finally {
    await handle.close();
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Run `tasks` with at most `limit` in flight, yielding results in task order. */
async function* inOrder<T>(tasks: readonly (() => Promise<T>)[], limit: number): AsyncGenerator<T> {
  const running: Promise<T>[] = [];
  let next = 0;
  while (next < tasks.length && running.length < limit) running.push(tasks[next++]!());
  while (running.length > 0) {
    const result = await running.shift()!;
    if (next < tasks.length) running.push(tasks[next++]!());
    yield result;
  }
}

/**
 * Walk `rootDir` and yield mined files and reported skips in code-point order of the relative
 * path. Only the first 8 KiB of each candidate file is read. Memory is bounded by one directory
 * listing per level.
 */
export async function* scanProject(rootDir: string, options: ScanOptions = {}): AsyncGenerator<ScanEntry> {
  let root: string;
  try {
    root = await realpath(rootDir);
    if (!(await stat(root)).isDirectory()) throw new Error('not a directory');
  } catch (e) {
    throw invalidArgument('directory', 'existing_directory', `${rootDir} is not a readable directory: ${errorText(e)}`);
  }
  const respectGitignore = options.respectGitignore ?? true;
  const maxBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const concurrency = Math.max(1, options.concurrency ?? 16);
  const extensions = options.extensions ?? MINED_EXTENSIONS;
  const sniffText = options.sniffText ?? true;
  const includes = normaliseIncludePaths(options.includeIgnored ?? []);
  const exact = new Set(includes);
  const forced = (rel: string) => includes.some((inc) => rel === inc || rel.startsWith(`${inc}/`) || inc.startsWith(`${rel}/`));

  const checkFile = async (rel: string, abs: string): Promise<ScanEntry> => {
    try {
      const st = await lstat(abs);
      if (st.isSymbolicLink()) return { kind: 'skip', skip: { relativePath: rel, reason: 'symlink', detail: 'symlinks are not followed' } };
      if (!st.isFile()) return { kind: 'skip', skip: { relativePath: rel, reason: 'not_regular_file', detail: 'not a regular file' } };
      if (st.size > maxBytes) {
        return { kind: 'skip', skip: { relativePath: rel, reason: 'too_large', detail: `${st.size} bytes exceeds the ${maxBytes}-byte limit` } };
      }
      const bad = sniffText ? await sniffFile(abs, st.size) : null;
      if (bad) return { kind: 'skip', skip: { relativePath: rel, ...bad } };
      return { kind: 'file', file: { relativePath: rel, absolutePath: abs, size: st.size, mtimeMs: st.mtimeMs } };
    } catch (e) {
      return { kind: 'skip', skip: { relativePath: rel, reason: 'unreadable', detail: errorText(e) } };
    }
  };

  async function* walk(dirAbs: string, dirRel: string, parentMatchers: readonly Matcher[], onlyForced: boolean): AsyncGenerator<ScanEntry> {
    let entries: Dirent[];
    try {
      entries = await readdir(dirAbs, { withFileTypes: true });
    } catch (e) {
      if (dirRel !== '') yield { kind: 'skip', skip: { relativePath: dirRel, reason: 'unreadable', detail: errorText(e) } };
      else throw invalidArgument('directory', 'readable', `${dirAbs} cannot be listed: ${errorText(e)}`);
      return;
    }
    let matchers = parentMatchers;
    if (respectGitignore && entries.some((d) => d.name === '.gitignore' && d.isFile())) {
      const m = await loadGitignore(dirAbs, dirRel);
      if (m) matchers = [...parentMatchers, m];
    }
    // Sorting siblings by name, with "/" appended to directories, makes the depth-first walk
    // emit whole paths in code-point order.
    const sorted = entries
      .map((d) => ({ d, key: d.isDirectory() ? `${d.name}/` : d.name }))
      .sort((a, b) => compareCodePoints(a.key, b.key));

    let pending: (() => Promise<ScanEntry>)[] = [];
    const flush = () => {
      const run = inOrder(pending, concurrency);
      pending = [];
      return run;
    };
    for (const { d } of sorted) {
      const rel = dirRel === '' ? d.name : `${dirRel}/${d.name}`;
      const isForced = forced(rel);
      // Inside a directory entered only because an include path lies under it, nothing else is mined.
      if (onlyForced && !isForced) continue;
      const abs = join(dirAbs, d.name);
      if (d.isDirectory()) {
        const pruned = SKIP_DIRS.has(d.name) || d.name.endsWith('.egg-info') || (respectGitignore && isIgnored(matchers, rel, true));
        if (pruned && !isForced) continue;
        yield* flush();
        yield* walk(abs, rel, matchers, onlyForced || pruned);
        continue;
      }
      if (SKIP_FILES.has(d.name) && !isForced) continue;
      if (!extensions.has(extname(d.name).toLowerCase()) && !exact.has(rel)) continue;
      if (respectGitignore && !isForced && isIgnored(matchers, rel, false)) continue;
      if (d.isSymbolicLink()) {
        pending.push(() => Promise.resolve({ kind: 'skip', skip: { relativePath: rel, reason: 'symlink', detail: 'symlinks are not followed' } }));
        continue;
      }
      if (!d.isFile()) {
        pending.push(() => Promise.resolve({ kind: 'skip', skip: { relativePath: rel, reason: 'not_regular_file', detail: 'not a regular file' } }));
        continue;
      }
      pending.push(() => checkFile(rel, abs));
    }
    yield* flush();
  }

  yield* walk(root, '', [], false);
}
