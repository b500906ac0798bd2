/**
 * Writing a file that must be minted exactly once per palace (the replica id, its signing key):
 * the content goes to a private temporary file, which is hard-linked into place. The file system
 * grants the link to one caller; the others find the file there and adopt the winner's content.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';

/** Links `content` into `file` unless a concurrent caller got there first (mode 0600). */
export function linkIntoPlaceOnce(file: string, content: string): void {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, content, { mode: 0o600 });
  try {
    fs.linkSync(tmp, file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}
