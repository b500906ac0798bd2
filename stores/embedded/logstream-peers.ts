/**
 * The peers file (logstream.md §8.6): `peers.json` in the palace directory unless the
 * configuration names another (`MEMPALACE_PEERS_FILE`, e.g. a mounted secret). A missing file means no peers; a
 * malformed one is an error naming the file. Tokens stay in the returned entries for the sync
 * transport only; the estate copies names and urls.
 */
import fs from 'node:fs';
import { invalidArgument } from '../../core/errors.js';
import type { PeerConfig } from '../palace-stores.js';

export function readPeersFile(file: string): PeerConfig[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw invalidArgument('peers', 'json', `${file} is malformed: ${(e as Error).message}`);
  }
  const peers = (parsed as { peers?: unknown } | null)?.peers;
  if (!Array.isArray(peers)) throw invalidArgument('peers', 'list', `${file}: 'peers' must be a list`);
  return peers.map((p: unknown) => {
    const entry = p as { name?: unknown; url?: unknown; token?: unknown } | null;
    if (typeof entry?.url !== 'string' || entry.url === '') throw invalidArgument('peers', 'url', `${file}: every peer needs at least a 'url'`);
    const name = typeof entry.name === 'string' && entry.name !== '' ? entry.name : entry.url;
    return typeof entry.token === 'string' ? { name, url: entry.url, token: entry.token } : { name, url: entry.url };
  });
}
