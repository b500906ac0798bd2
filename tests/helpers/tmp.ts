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

/**
 * Opened stores with the cleanup a test gives back: each store closed in order, then `after`
 * (removing their directory, dropping their keys).
 */
export function withCleanup<T extends Record<string, { close(): Promise<void> }>>(stores: T, after: () => Promise<void> | void): T & {
  cleanup(): Promise<void>;
} {
  return {
    ...stores,
    async cleanup() {
      for (const store of Object.values(stores)) await store.close();
      await after();
    },
  };
}

/** A store opened by `open` in a fresh temp directory. */
export async function openInTempDir<S extends { close(): Promise<void> }>(prefix: string, open: (dir: string) => Promise<S>): Promise<TempStore<S>> {
  const dir = makeTempDir(prefix);
  const store = await open(dir);
  return { dir, ...withCleanup({ store }, () => removeDir(dir)) };
}
