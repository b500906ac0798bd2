/**
 * Throwaway palace directories for tests of the embedded stores: a fresh temp directory per test
 * and, for a store opened in one, a cleanup that closes the store before removing the directory.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A new empty directory under the OS temp directory, named `<prefix><random>`. */
export function makeTempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

export interface TempStore<S> {
  dir: string;
  store: S;
  /** Closes the store, then removes its directory. */
  cleanup(): Promise<void>;
}

/** A store opened by `open` in a fresh temp directory. */
export async function openInTempDir<S extends { close(): Promise<void> }>(prefix: string, open: (dir: string) => Promise<S>): Promise<TempStore<S>> {
  const dir = makeTempDir(prefix);
  const store = await open(dir);
  return {
    dir,
    store,
    async cleanup() {
      await store.close();
      removeDir(dir);
    },
  };
}
