/**
 * The setting of a test file that runs the real MiniLM embedder over palaces it makes: a temp
 * directory and the embedder, built in the file's first beforeAll and, after its own afterAll
 * hooks (vitest runs them in reverse order), the embedder closed and the directory removed.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { loadConfig } from '../../app/config.js';
import { MiniLmEmbedder } from '../../embed/minilm.js';

export interface EmbedderInTempDir {
  /** The file's temp directory, `<prefix><random>`. */
  tmp: string;
  embedder: MiniLmEmbedder;
}

/** Call at the top of the file, before its own hooks; the fields are set once the first beforeAll has run. */
export function useEmbedderInTempDir(prefix: string): EmbedderInTempDir {
  const fixture = {} as EmbedderInTempDir;
  beforeAll(async () => {
    fixture.tmp = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
    fixture.embedder = new MiniLmEmbedder(loadConfig());
  });
  afterAll(async () => {
    await fixture.embedder?.close();
    if (fixture.tmp) await fs.rm(fixture.tmp, { recursive: true, force: true });
  });
  return fixture;
}
