/**
 * The two chunkers of the palace, both counting Unicode code points (docs/tools.md §0):
 *
 * - `chunkText` (docs/palace-behaviour.md §4.5) cuts mined files into overlapping, stripped pieces with
 *   approximate line numbers; short pieces are dropped.
 * - `splitContent` (docs/tools.md §0.4) cuts add_drawer and diary content into rows whose
 *   concatenation is the input byte for byte, preferring natural boundaries.
 */
import { strip } from './text.js';

export interface ChunkOptions {
  size?: unknown;
  overlap?: unknown;
  min?: unknown;
}

export interface ChunkParams {
  size: number;
  overlap: number;
  min: number;
}

export interface TextChunk {
  content: string;
  chunkIndex: number;
  /** 1-based line of the window start, relative to the stripped content. */
  lineStart: number;
  /** 1-based line of the window end, relative to the stripped content. */
  lineEnd: number;
}

export const DEFAULT_CHUNK_SIZE = 800;
export const DEFAULT_CHUNK_OVERLAP = 100;
export const DEFAULT_MIN_CHUNK_SIZE = 50;

function intAtLeast(value: unknown, minimum: number, dflt: number): number {
  // Booleans are not numbers here (Python's bool-is-int is what the spec guards against).
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum) return dflt;
  return value;
}

/**
 * The config repair rules of docs/palace-behaviour.md §4.5. Spec-silent minimums: a chunk holds at least one code point,
 * overlap may be 0, and a kept chunk holds at least one code point (an empty drawer is useless).
 */
export function repairChunkParams(opts: ChunkOptions = {}): ChunkParams {
  const size = intAtLeast(opts.size, 1, DEFAULT_CHUNK_SIZE);
  let overlap = intAtLeast(opts.overlap, 0, DEFAULT_CHUNK_OVERLAP);
  let min = intAtLeast(opts.min, 1, DEFAULT_MIN_CHUNK_SIZE);
  if (overlap >= size) overlap = DEFAULT_CHUNK_OVERLAP < size ? DEFAULT_CHUNK_OVERLAP : size - 1;
  if (min > size) min = DEFAULT_MIN_CHUNK_SIZE <= size ? DEFAULT_MIN_CHUNK_SIZE : size;
  return { size, overlap, min };
}

/** Last index p in [from, to) with cps[p..] starting with `needle` fully inside [from, to). */
function lastIndexIn(cps: readonly string[], needle: readonly string[], from: number, to: number): number {
  for (let p = to - needle.length; p >= from; p--) {
    let ok = true;
    for (let k = 0; k < needle.length; k++) {
      if (cps[p + k] !== needle[k]) {
        ok = false;
        break;
      }
    }
    if (ok) return p;
  }
  return -1;
}

const BLANK_LINE = ['\n', '\n'];
const NEWLINE = ['\n'];

/** docs/palace-behaviour.md §4.5 `chunk_text`, with the guaranteed-progress fix of its [QUIRK]. */
export function chunkText(content: string, opts: ChunkOptions = {}): TextChunk[] {
  const { size, overlap, min } = repairChunkParams(opts);
  const cps = Array.from(strip(content));
  const n = cps.length;
  if (n === 0) return [];
  // newlinesBefore[i] = number of "\n" in cps[0:i]; line numbers without rescanning the prefix.
  const newlinesBefore = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) newlinesBefore[i + 1] = newlinesBefore[i]! + (cps[i] === '\n' ? 1 : 0);

  const half = Math.floor(size / 2);
  const chunks: TextChunk[] = [];
  let start = 0;
  while (start < n) {
    let end = Math.min(start + size, n);
    if (end < n) {
      const blank = lastIndexIn(cps, BLANK_LINE, start, end);
      if (blank > start + half) {
        end = blank;
      } else {
        const nl = lastIndexIn(cps, NEWLINE, start, end);
        if (nl > start + half) end = nl;
      }
    }
    const piece = strip(cps.slice(start, end).join(''));
    if (Array.from(piece).length >= min) {
      chunks.push({
        content: piece,
        chunkIndex: chunks.length,
        lineStart: newlinesBefore[start]! + 1,
        lineEnd: newlinesBefore[end]! + 1,
      });
    }
    start = end < n ? Math.max(end - overlap, start + 1) : end;
  }
  return chunks;
}

export const DEFAULT_BOUNDARY_MIN_CHUNKS = 0;

/** A heading line starts at `i`: 1–6 `#` then a space. */
function headingStartsAt(cps: readonly string[], i: number): boolean {
  let k = 0;
  while (k < 6 && cps[i + k] === '#') k++;
  return k >= 1 && cps[i + k] === ' ';
}

/**
 * The best cut in (lo, hi] by docs/tools.md §0.4 preference: before a heading line, after a blank line, after
 * a newline, after a space; -1 if none. A cut position is the index where the next row starts.
 */
function preferredCut(cps: readonly string[], lo: number, hi: number): number {
  let heading = -1;
  let blank = -1;
  let newline = -1;
  let space = -1;
  for (let c = hi; c > lo; c--) {
    const prev = cps[c - 1];
    if (prev === '\n') {
      if (heading < 0 && headingStartsAt(cps, c)) heading = c;
      if (blank < 0 && cps[c - 2] === '\n') blank = c;
      if (newline < 0) newline = c;
    } else if (prev === ' ' && space < 0) {
      space = c;
    }
    if (heading >= 0) break;
  }
  for (const c of [heading, blank, newline, space]) if (c >= 0) return c;
  return -1;
}

/**
 * docs/tools.md §0.4: rows of at most `chunkSize` code points whose concatenation equals `content`.
 * Content that fits in one row is returned whole. `minChunks` is `chunk_boundary_min_chunks`
 * (docs/decisions.md A2: default 0, always snap): when plain fixed-size slicing would give fewer rows
 * than it, rows are cut at fixed positions instead.
 */
export function splitContent(content: string, chunkSize = 800, minChunks = DEFAULT_BOUNDARY_MIN_CHUNKS): string[] {
  const size = Number.isInteger(chunkSize) && chunkSize >= 1 ? chunkSize : 800;
  const cps = Array.from(content);
  const n = cps.length;
  if (n <= size) return [content];
  const snap = Math.ceil(n / size) >= minChunks;
  const rows: string[] = [];
  let start = 0;
  while (start < n) {
    let end = Math.min(start + size, n);
    if (end < n && snap) {
      const cut = preferredCut(cps, start + Math.floor(size / 2), end);
      if (cut > 0) end = cut;
    }
    rows.push(cps.slice(start, end).join(''));
    start = end;
  }
  return rows;
}

/** The first `n` code points of `s` without materialising the whole string as an array. */
export function codePointPrefix(s: string, n: number): string {
  let units = 0;
  let count = 0;
  for (const ch of s) {
    if (count === n) break;
    units += ch.length;
    count++;
  }
  return s.slice(0, units);
}
