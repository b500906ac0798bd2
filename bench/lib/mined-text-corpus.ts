/**
 * A bench corpus whose words are those of mined text: the drawers are the chunks `chunkText`
 * (the miner's chunker) cuts from the text files of this repository and its node_modules, walked
 * in a fixed order. Vectors stay synthetic (clustered 384-d unit vectors, as in
 * synthetic-drawers.ts): embedding a million chunks is hours of model time on this machine, and
 * the vector legs are measured with in-distribution query vectors anyway.
 *
 * The corpus is streamed: `drawers()` yields batches and can be walked again (the same rows each
 * time), so a process loading a million drawers holds one batch, not the corpus. When the files
 * run out the walk starts over (a later pass repeats the chunks under new ids, as a second mine of
 * copies would); `passes` in the summary says how often.
 *
 * Queries come from held-out chunks: every `HOLD_OUT`-th chunk of the walk is never a drawer, and
 * each one gives one query, alternately a phrase (a run of 3–6 consecutive words at a seeded
 * position) and its two longest identifiers joined by a space. Both kinds are what an agent types:
 * a remembered sentence, or names from code. Held-out chunks are found by the same walk that
 * yields the drawers, so a query's words are in the corpus without the query's chunk being in it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import { chunkText } from '../../core/chunking.js';
import type { DrawerWrite } from '../../core/drawer.js';
import { seededRandom } from '../../core/seeded-random.js';
import { drawer, filedAt, nearVector, randomUnitVector } from '../../tests/contract/drawer-index.fixtures.js';
import { DIM } from './synthetic-drawers.js';

const TEXT_EXTENSIONS = new Set(['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs', '.md', '.markdown', '.txt', '.json', '.yaml', '.yml', '.sh', '.html', '.css']);
/** Larger files are mostly generated bundles and data tables, which a miner's size cap skips too. */
const FILE_MAX_BYTES = 256 * 1024;
/** One chunk in this many is held out as the source of a query. */
const HOLD_OUT = 97;
/** Drawers per vector cluster centre, as in synthetic-drawers.ts. */
const PER_CENTER = 200;

const WORD = /[\p{L}\p{N}_]+(?:[.-][\p{L}\p{N}_]+)*/gu;

/** Files under `root` with a text extension, in byte order of their paths, without following symlinks. */
function* textFiles(root: string): Generator<string> {
  const entries = readdirSync(root, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    if (e.name === '.git') continue;
    const path = join(root, e.name);
    if (e.isDirectory()) yield* textFiles(path);
    else if (e.isFile() && TEXT_EXTENSIONS.has(extname(e.name)) && statSync(path).size <= FILE_MAX_BYTES) yield path;
  }
}

interface Chunk {
  source: string;
  index: number;
  text: string;
}

/** Every chunk of every file under the roots (a symlinked node_modules inside a root is not followed; name it as a root). */
function* chunks(roots: readonly string[]): Generator<Chunk> {
  for (const root of roots) {
    for (const file of textFiles(root)) {
      const text = readFileSync(file, 'utf8');
      for (const c of chunkText(text)) yield { source: relative(root, file), index: c.chunkIndex, text: c.content };
    }
  }
}

/** A query from a held-out chunk: a phrase of 3–6 words, or its two longest identifiers (alternately). */
function queryOf(text: string, ordinal: number, rnd: () => number): string | undefined {
  const words = [...text.matchAll(WORD)].map((m) => m[0]).filter((w) => w.length >= 2);
  if (words.length < 3) return undefined;
  if (ordinal % 2 === 0) {
    const length = 3 + Math.floor(rnd() * 4);
    // Not the first or last word: a chunk may start or end inside one.
    const start = 1 + Math.floor(rnd() * Math.max(1, words.length - length - 1));
    return words.slice(start, start + length).join(' ');
  }
  const identifiers = [...new Set(words.filter((w) => /[A-Z_.-]|\p{Ll}\p{Lu}/u.test(w)))].sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
  return identifiers.length >= 2 ? `${identifiers[0]} ${identifiers[1]}` : undefined;
}

export interface MinedCorpus {
  /** Cluster centres of the synthetic vectors (for in-distribution query vectors). */
  centers: Float32Array[];
  /** The drawers, `batch` at a time; each call walks the same rows again. */
  drawers(batch: number): Generator<DrawerWrite[]>;
  /** Only the ids, metadata and vectors (no file reads), for exact nearest-neighbour truths. */
  vectors(): Generator<{ wing: string; room: string; id: string; embedding: Float32Array }>;
  /** Queries from held-out chunks, filled by the first full walk of `drawers()`. */
  queries: string[];
  /** Chunks the first walk read (drawers and held-out ones) and the passes over the files it made. */
  summary: { chunksWalked: number; passes: number };
}

export function minedTextCorpus(n: number, roots: readonly string[], seed = 11): MinedCorpus {
  const centers = (() => {
    const rnd = seededRandom(seed);
    return Array.from({ length: Math.max(50, Math.ceil(n / PER_CENTER)) }, () => randomUnitVector(rnd, DIM));
  })();
  const meta = (i: number) => ({ wing: i % 20 === 0 ? 'rare' : 'common', room: `room_${i % 50}` });
  const summary = { chunksWalked: 0, passes: 0 };
  const queries: string[] = [];
  let walked = false;

  function* drawers(batch: number): Generator<DrawerWrite[]> {
    const rnd = seededRandom(seed + 1);
    const queryRnd = seededRandom(seed + 2);
    if (!walked) {
      // An earlier walk left unfinished collected part of the queries: start them over.
      queries.length = 0;
      summary.chunksWalked = 0;
    }
    let out: DrawerWrite[] = [];
    let i = 0;
    for (let pass = 0; i < n; pass++) {
      let ordinal = 0;
      let yielded = false;
      for (const c of chunks(roots)) {
        ordinal++;
        if (ordinal % HOLD_OUT === 0) {
          if (!walked && pass === 0) {
            const q = queryOf(c.text, queries.length, queryRnd);
            if (q !== undefined) queries.push(q);
          }
          continue;
        }
        if (i >= n) break;
        const { wing, room } = meta(i);
        out.push(drawer(`bench_${i}`, c.text, nearVector(rnd, centers[i % centers.length]!), {
          wing,
          room,
          source_file: pass === 0 ? c.source : `pass${pass}/${c.source}`,
          chunk_index: c.index,
          filed_at: filedAt(i),
        }));
        i++;
        yielded = true;
        if (out.length === batch) {
          yield out;
          out = [];
        }
      }
      if (!yielded) throw new Error(`no text files under ${roots.join(', ')}`);
      if (!walked) summary.chunksWalked += ordinal;
      if (!walked) summary.passes = pass + 1;
    }
    if (out.length > 0) yield out;
    walked = true;
  }

  function* vectors(): Generator<{ wing: string; room: string; id: string; embedding: Float32Array }> {
    const rnd = seededRandom(seed + 1);
    for (let i = 0; i < n; i++) yield { ...meta(i), id: `bench_${i}`, embedding: nearVector(rnd, centers[i % centers.length]!) };
  }

  return { centers, drawers, vectors, queries, summary };
}
