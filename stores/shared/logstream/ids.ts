/** Event and artifact identifiers of docs/logstream.md §2, minted the same way by every adapter. */
import { randomBytes } from 'node:crypto';

/** `evt_` / `art_` + UTC stamp + `_` + 12 hex from a CSPRNG. */
export function newStampedId(prefix: 'evt' | 'art', nowMs: number): string {
  const iso = new Date(nowMs).toISOString();
  const stamp = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}`;
  return `${prefix}_${stamp}_${randomBytes(6).toString('hex')}`;
}
