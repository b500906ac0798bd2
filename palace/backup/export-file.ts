/**
 * Reading an export file (gzip JSON lines, backup-records.ts): its identity (size and sha256 of
 * its bytes, which ties an import checkpoint to exactly this file) and its items, streamed.
 * Every way the file can be unusable (missing, unreadable, a directory, not gzip, not JSON) is an
 * `invalid_argument` error on `file` naming the rule, never an unhandled stream error.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import readline from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { invalidArgument, isPalaceError } from '../../core/errors.js';
import type { PalaceError } from '../../core/errors.js';

export interface ExportFileIdentity {
  file: string;
  size: number;
  sha256: string;
}

/** The structured error for a file system failure on `file`, or undefined when it is not one. */
function fileError(file: string, e: unknown): PalaceError | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return invalidArgument('file', 'exists', `${file} does not exist`);
  if (code === 'EACCES' || code === 'EPERM') return invalidArgument('file', 'readable', `${file} cannot be read (permission denied)`);
  if (code === 'EISDIR') return invalidArgument('file', 'regular_file', `${file} is a directory, not an export file`);
  if (typeof code === 'string' && code.startsWith('Z_'))
    return invalidArgument('file', 'gzip', `${file} is not a complete gzip stream (${(e as Error).message})`);
  return undefined;
}

/** Size and sha256 of the file's bytes; fails with a structured error when it cannot be read. */
export async function exportFileIdentity(file: string): Promise<ExportFileIdentity> {
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile()) throw invalidArgument('file', 'regular_file', `${file} is not a regular file`);
    const hash = createHash('sha256');
    await pipeline(createReadStream(file), hash);
    return { file, size: stat.size, sha256: hash.digest('hex') };
  } catch (e) {
    throw isPalaceError(e) ? e : (fileError(file, e) ?? e);
  }
}

/**
 * The items of an export file, one parsed JSON value per line, streamed. A blank line is refused
 * like any other non-JSON line, so record n is always line n + 1 and errors can name the line.
 */
export async function* readExportFile(file: string): AsyncGenerator<unknown> {
  const input = createReadStream(file);
  const gunzip = createGunzip();
  // `pipe` does not forward errors: without this a missing file is an unhandled 'error' event.
  input.on('error', (e) => gunzip.destroy(e));
  const lines = readline.createInterface({ input: input.pipe(gunzip), crlfDelay: Infinity });
  let n = 0;
  try {
    for await (const line of lines) {
      n++;
      try {
        yield JSON.parse(line) as unknown;
      } catch {
        throw invalidArgument('file', 'json_lines', `line ${n} of ${file} is not JSON`, { line: n });
      }
    }
  } catch (e) {
    const mapped = isPalaceError(e) ? undefined : fileError(file, e);
    if (mapped?.rule === 'gzip') throw invalidArgument('file', 'gzip', `${mapped.message}; what was read before is applied`);
    throw mapped ?? e;
  } finally {
    lines.close();
    input.destroy();
  }
}
