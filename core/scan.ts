/**
 * The rules of projects-mode mining's file walk (docs/palace-behaviour.md §4.2, §4.3): which files
 * of a project directory are mined, and in what order. Paths come out in code-point order of the
 * project-relative POSIX path, so `limit` and summaries are deterministic (docs/palace-behaviour.md
 * §4.2 [QUIRK]). The walk itself, which reads the directory, is palace/sources/scan.ts.
 *
 * Beyond the spec, every file is sniffed (first 8 KiB): files with NUL bytes are skipped as
 * binary and files that are not UTF-8 are skipped with a reason, instead of being decoded with
 * replacement characters into drawers nobody can search.
 */
import ignore, { type Ignore } from 'ignore';

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
export function isIgnored(matchers: readonly Matcher[], relativePath: string, isDir: boolean): boolean {
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

/** The rules of one `.gitignore` (in the directory `base`, relative to the root). */
export function gitignoreMatcher(text: string, base: string): Matcher {
  // Git globbing is case-sensitive (docs/palace-behaviour.md §4.3); the library's default is not.
  return { base, ig: ignore({ ignorecase: false }).add(text) };
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
