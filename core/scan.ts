/**
 * The file walk of projects-mode mining (docs/palace-behaviour.md §4.2, §4.3): which files of a project
 * directory are mined. Paths come out in code-point order of the project-relative POSIX path, so
 * `limit` and summaries are deterministic (docs/palace-behaviour.md §4.2 [QUIRK]).
 *
 * Beyond the spec, every file is sniffed (first 8 KiB): files with NUL bytes are skipped as
 * binary and files that are not UTF-8 are skipped with a reason, instead of being decoded with
 * replacement characters into drawers nobody can search.
 */
import type { Dirent } from 'node:fs';
import { constants } from 'node:fs';
import { lstat, open, readFile, readdir, realpath, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { invalidArgument } from './errors.js';

export const SKIP_DIRS: ReadonlySet<string> = new Set([
  '.git',
  'node_modules',
  '__pycache__',
  '.venv',
  'venv',
  'env',
  'dist',
  'build',
  '.next',
  'coverage',
  '.mempalace',
  '.ruff_cache',
  '.mypy_cache',
  '.pytest_cache',
  '.cache',
  '.tox',
  '.nox',
  '.idea',
  '.vscode',
  '.ipynb_checkpoints',
  '.eggs',
  'htmlcov',
  'target',
]);

export const SKIP_FILES: ReadonlySet<string> = new Set([
  'entities.json',
  'mempalace.yaml',
  'mempalace.yml',
  'mempal.yaml',
  'mempal.yml',
  '.gitignore',
  'package-lock.json',
  'pnpm-lock.yaml',
  'yarn.lock',
]);

export const MINED_EXTENSIONS: ReadonlySet<string> = new Set([
  '.txt',
  '.md',
  '.py',
  '.js',
  '.ts',
  '.jsx',
  '.tsx',
  '.json',
  '.jsonl',
  '.yaml',
  '.yml',
  '.html',
  '.css',
  '.java',
  '.go',
  '.rs',
  '.rb',
  '.sh',
  '.csv',
  '.sql',
  '.toml',
]);

/**
 * 10 MiB. The spec's 500 MiB cap would let one generated dump or log file become hundreds of
 * thousands of drawers (about 13,000 per 10 MiB of text at 800 code points each) and be read
 * whole into memory; real source and notes files are far smaller. Configurable per scan.
 */
export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;

/** How many leading bytes are sniffed for NUL bytes and UTF-8 validity. */
export const SNIFF_BYTES = 8192;

export type SkipReason = 'symlink' | 'too_large' | 'binary' | 'not_utf8' | 'not_regular_file' | 'unreadable';

export interface ScannedFile {
  /** POSIX path relative to the project root. */
  relativePath: string;
  absolutePath: string;
  size: number;
  mtimeMs: number;
}

export interface ScanSkip {
  relativePath: string;
  reason: SkipReason;
  detail: string;
}

export type ScanEntry = { kind: 'file'; file: ScannedFile } | { kind: 'skip'; skip: ScanSkip };

export interface ScanOptions {
  /** Apply `.gitignore` files (default true). */
  respectGitignore?: boolean;
  /** Force-included project-relative paths (`include_ignored`). */
  includeIgnored?: readonly string[];
  /** Files larger than this many bytes are skipped as `too_large`. */
  maxFileBytes?: number;
  /** Files sniffed in parallel (default 16). */
  concurrency?: number;
  /** Extensions to keep (lowercase, with the dot); default the projects list. */
  extensions?: ReadonlySet<string>;
  /** Sniff for binary / non-UTF-8 content (default true; off for office documents). */
  sniffText?: boolean;
}

export interface ScanManifest {
  root: string;
  files: ScannedFile[];
  skipped: ScanSkip[];
}

/** Compare strings by Unicode code point (JavaScript's `<` compares UTF-16 units). */
export function compareCodePoints(a: string, b: string): number {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done) return y.done ? 0 : -1;
    if (y.done) return 1;
    const d = x.value.codePointAt(0)! - y.value.codePointAt(0)!;
    if (d !== 0) return d;
  }
}

/** Each entry stripped of whitespace and surrounding `/` (docs/palace-behaviour.md §4.2 force-include). */
export function normaliseIncludePaths(paths: readonly string[]): string[] {
  return paths.map((p) => p.trim().replace(/^\/+|\/+$/g, '')).filter((p) => p !== '');
}

export interface Matcher {
  /** Directory of the `.gitignore`, relative to the root ("" for the root). */
  base: string;
  ig: Ignore;
}

/**
 * Git semantics across nested `.gitignore` files: the matchers from the root down to the path's
 * directory apply in order and the last one with an opinion (ignore or re-include) wins.
 */
function isIgnored(matchers: readonly Matcher[], relativePath: string, isDir: boolean): boolean {
  let ignored = false;
  for (const m of matchers) {
    const local = m.base === '' ? relativePath : relativePath.slice(m.base.length + 1);
    const result = m.ig.test(isDir ? `${local}/` : local);
    if (result.ignored) ignored = true;
    else if (result.unignored) ignored = false;
  }
  return ignored;
}

/** Parsed `.gitignore` per directory (relative path), null where there is none. */
export type GitignoreCache = Map<string, Matcher | null>;

async function loadGitignore(dirAbs: string, base: string): Promise<Matcher | null> {
  let text: string;
  try {
    // toString('utf8') replaces invalid bytes, as docs/palace-behaviour.md §4.3 asks.
    text = (await readFile(join(dirAbs, '.gitignore'))).toString('utf8');
  } catch {
    return null;
  }
  // Git globbing is case-sensitive (docs/palace-behaviour.md §4.3); the library's default is not.
  const ig = ignore({ ignorecase: false }).add(text);
  return { base, ig };
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

/**
 * Why a file's leading bytes cannot be mined as UTF-8 text, or null. `complete` says whether
 * `bytes` is the whole file; if not, a multi-byte sequence cut at the end is not an error.
 */
export function sniffBytes(bytes: Uint8Array, complete: boolean): { reason: 'binary' | 'not_utf8'; detail: string } | null {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    return { reason: 'not_utf8', detail: 'UTF-16 text (byte-order mark); only UTF-8 is mined' };
  }
  const nul = bytes.indexOf(0);
  if (nul >= 0) return { reason: 'binary', detail: `NUL byte at offset ${nul}` };
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: !complete });
  } catch {
    return { reason: 'not_utf8', detail: `not valid UTF-8 in the first ${bytes.length} bytes` };
  }
  return null;
}

/**
 * Decode a whole file for mining: the text, or why it is skipped (the scan only sniffed the
 * first 8 KiB). A leading byte-order mark is dropped.
 */
export function decodeUtf8File(bytes: Uint8Array): { ok: true; text: string } | { ok: false; reason: 'binary' | 'not_utf8'; detail: string } {
  const sniffed = sniffBytes(bytes, true);
  if (sniffed) return { ok: false, ...sniffed };
  try {
    return { ok: true, text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    return { ok: false, reason: 'not_utf8', detail: 'not valid UTF-8' };
  }
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

/** The whole scan as a manifest (files and reported skips, each in path order). */
export async function scanManifest(rootDir: string, options: ScanOptions = {}): Promise<ScanManifest> {
  const files: ScannedFile[] = [];
  const skipped: ScanSkip[] = [];
  for await (const entry of scanProject(rootDir, options)) {
    if (entry.kind === 'file') files.push(entry.file);
    else skipped.push(entry.skip);
  }
  return { root: await realpath(rootDir), files, skipped };
}
