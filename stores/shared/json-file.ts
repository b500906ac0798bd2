/** A JSON settings file that may be absent: the palace's entity registry, the peers file. */
import fs from 'node:fs';
import { invalidArgument } from '../../core/errors.js';

/** The parsed contents of `file`; undefined when there is none, refused under `field` when it is not JSON. */
export function readOptionalJsonFile(file: string, field: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw invalidArgument(field, 'json', `${file} is malformed: not valid JSON (${e instanceof Error ? e.message : String(e)})`);
  }
}
