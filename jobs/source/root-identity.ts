/**
 * Which filesystem object a mined directory source was (issue 24 D1): the device and inode of
 * its root directory, read when it is mined and recorded in every file state it produced
 * (`extra.root`, `extra.root_dev`, `extra.root_ino`). An unmounted volume leaves its bare mount
 * point at the same path, and a replaced directory is a new inode: either way the identity read
 * now differs from the recorded one, so sync knows the files it cannot see were not deleted
 * from the source it mined. Numbers are kept as decimal text: inodes may pass 2^53.
 */
import fs from 'node:fs/promises';
import type { FileState } from '../../stores/ports/drawers/file-states.js';

export interface SourceRootIdentity {
  root: string;
  root_dev: string;
  root_ino: string;
}

export async function readRootIdentity(root: string): Promise<SourceRootIdentity> {
  const st = await fs.stat(root, { bigint: true });
  return { root, root_dev: st.dev.toString(), root_ino: st.ino.toString() };
}

/** The identity a file state recorded, if its mine recorded one. */
export function recordedRootIdentity(state: FileState | undefined): SourceRootIdentity | undefined {
  const e = state?.extra;
  if (typeof e?.root !== 'string' || typeof e.root_dev !== 'string' || typeof e.root_ino !== 'string') return undefined;
  return { root: e.root, root_dev: e.root_dev, root_ino: e.root_ino };
}

export function sameRootIdentity(a: SourceRootIdentity | undefined, b: SourceRootIdentity | undefined): boolean {
  return a !== undefined && b !== undefined && a.root === b.root && a.root_dev === b.root_dev && a.root_ino === b.root_ino;
}

/** The root's identity now, or undefined when nothing is at its path any more. */
export async function currentRootIdentity(root: string): Promise<SourceRootIdentity | undefined> {
  try {
    return await readRootIdentity(root);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw e;
  }
}
