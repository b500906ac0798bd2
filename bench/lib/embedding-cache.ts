/**
 * Vectors of a quality run kept between runs, outside the repository (the system's temporary
 * directory): one file per model identity (name and weights checksum), each vector under the
 * SHA-256 of its text. Quality runs re-rank the same texts many times; only the ranking changes
 * between them, so embedding them again measures nothing. Never used for speed figures.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Embedder } from '../../embed/embedder.js';

const CACHE_DIR = path.join(os.tmpdir(), 'mempalace-bench-embeddings');

const textKey = (text: string) => createHash('sha256').update(text).digest('hex');

/** `embedder.embed` for `texts`, from the cache where it holds them; what it lacks is embedded and added. */
export async function cachedEmbeddings(embedder: Embedder, texts: readonly string[]): Promise<Float32Array[]> {
  const file = path.join(CACHE_DIR, `${embedder.identity.name}-${embedder.identity.weightsSha256.slice(0, 16)}.json`);
  let held: Record<string, number[]> = {};
  try {
    held = JSON.parse(await fs.readFile(file, 'utf8')) as Record<string, number[]>;
  } catch {
    // No cache yet (or an unreadable one): everything is embedded and the file written anew.
  }
  const missing = [...new Set(texts.filter((t) => held[textKey(t)] === undefined))];
  if (missing.length > 0) {
    const vectors = await embedder.embed(missing);
    missing.forEach((t, i) => {
      held[textKey(t)] = Array.from(vectors[i]!);
    });
    await fs.mkdir(CACHE_DIR, { recursive: true });
    const partial = `${file}.${process.pid}.tmp`;
    await fs.writeFile(partial, JSON.stringify(held));
    await fs.rename(partial, file);
  }
  return texts.map((t) => Float32Array.from(held[textKey(t)]!));
}
