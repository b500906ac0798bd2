/**
 * Reading a file that a scan listed, refusing it if it changed into a link since (a file swapped
 * for a symlink between scan and read, or a directory above it swapped for one): the last
 * component is opened with O_NOFOLLOW (and O_NONBLOCK, so a FIFO put in its place cannot hang the
 * read), the opened file must be a regular file, the path's real path must still be the path
 * itself (scans list canonical paths), and that real path must name the very file opened.
 */
import { constants } from 'node:fs';
import { open, realpath, stat } from 'node:fs/promises';

export type ListedFileRefusal = 'symlink' | 'not_regular_file' | 'moved';

export class ListedFileRefused extends Error {
  constructor(readonly reason: ListedFileRefusal, message: string) {
    super(message);
    this.name = 'ListedFileRefused';
  }
}

export interface ListedFile {
  bytes: Buffer;
  size: number;
  mtimeMs: number;
}

export async function readListedFile(absolutePath: string): Promise<ListedFile> {
  let handle;
  try {
    handle = await open(absolutePath, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') throw new ListedFileRefused('symlink', 'became a symbolic link after the scan; links are not followed');
    throw e;
  }
  try {
    const opened = await handle.stat();
    if (!opened.isFile()) throw new ListedFileRefused('not_regular_file', 'is no longer a regular file');
    const real = await realpath(absolutePath);
    if (real !== absolutePath) throw new ListedFileRefused('symlink', `now resolves through a symbolic link to '${real}'; links are not followed`);
    const named = await stat(real);
    if (named.ino !== opened.ino || named.dev !== opened.dev) throw new ListedFileRefused('moved', 'was replaced while it was being read');
    return { bytes: await handle.readFile(), size: opened.size, mtimeMs: opened.mtimeMs };
  } finally {
    await handle.close();
  }
}
