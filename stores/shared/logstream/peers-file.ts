/**
 * The peers file (docs/logstream.md §8.6): `peers.json` in the palace directory unless the
 * configuration names another (`MEMPALACE_PEERS_FILE`, e.g. a mounted secret). A missing file means no peers; a
 * malformed one is an error naming the file. Tokens stay in the returned entries for the sync
 * transport only; the estate copies names and urls.
 *
 * The file is also where this replica learns whom to believe (issue 24, M1): a peer entry may
 * carry the peer's `replica_id` and `public_key`, and `origins` lists the keys of replicas
 * reached only through other peers. Records of an origin with no key here are never stored.
 */
import { invalidArgument } from '../../../core/errors.js';
import type { PeerConfig } from '../../ports/palace-stores.js';
import { readOptionalJsonFile } from '../json-file.js';

const REPLICA_RE = /^rep_(?:[0-9a-f]{32}|[0-9a-f]{12})$/;
const PUBLIC_KEY_RE = /^ed25519:[A-Za-z0-9_-]{43}$/;

function readDocument(file: string): Record<string, unknown> | null {
  const parsed = readOptionalJsonFile(file, 'peers');
  if (parsed === undefined) return null;
  return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
}

/** A `{ replica_id, public_key }` pair of an entry, both or neither. */
function originKey(file: string, where: string, entry: { replica_id?: unknown; public_key?: unknown }): { replica_id: string; public_key: string } | null {
  if (entry.replica_id === undefined && entry.public_key === undefined) return null;
  if (typeof entry.replica_id !== 'string' || !REPLICA_RE.test(entry.replica_id))
    throw invalidArgument('replica_id', 'replica_id', `${file}: ${where} needs a 'replica_id' (rep_ + 32 or 12 lowercase hex) beside its 'public_key'`);
  if (typeof entry.public_key !== 'string' || !PUBLIC_KEY_RE.test(entry.public_key))
    throw invalidArgument('public_key', 'ed25519_public_key',
      `${file}: ${where} needs a 'public_key' like ed25519:<43 base64url characters> beside its 'replica_id'`);
  return { replica_id: entry.replica_id, public_key: entry.public_key };
}

export function readPeersFile(file: string): PeerConfig[] {
  const doc = readDocument(file);
  if (doc === null) return [];
  const peers = doc.peers;
  if (!Array.isArray(peers)) throw invalidArgument('peers', 'list', `${file}: 'peers' must be a list`);
  return peers.map((p: unknown) => {
    const entry = p as { name?: unknown; url?: unknown; token?: unknown; replica_id?: unknown; public_key?: unknown } | null;
    if (typeof entry?.url !== 'string' || entry.url === '') throw invalidArgument('peers', 'url', `${file}: every peer needs at least a 'url'`);
    const name = typeof entry.name === 'string' && entry.name !== '' ? entry.name : entry.url;
    const key = originKey(file, `peer '${name}'`, entry);
    return { name, url: entry.url, ...(typeof entry.token === 'string' ? { token: entry.token } : {}), ...(key ?? {}) };
  });
}

/** Every public key the file names, by replica id: the peers' own and the `origins` list; one key per replica. */
export function readOriginKeys(file: string): Record<string, string> {
  const doc = readDocument(file);
  if (doc === null) return {};
  const origins = doc.origins ?? [];
  if (!Array.isArray(origins)) throw invalidArgument('origins', 'list', `${file}: 'origins' must be a list`);
  const pairs = [
    ...readPeersFile(file).flatMap((p) => (p.replica_id && p.public_key ? [{ replica_id: p.replica_id, public_key: p.public_key }] : [])),
    ...origins.map((o: unknown, i) => {
      const key = originKey(file, `origins[${i}]`, (o ?? {}) as Record<string, unknown>);
      if (!key) throw invalidArgument('origins', 'origin_key', `${file}: origins[${i}] needs a 'replica_id' and a 'public_key'`);
      return key;
    }),
  ];
  const keys: Record<string, string> = {};
  for (const { replica_id, public_key } of pairs) {
    if (keys[replica_id] !== undefined && keys[replica_id] !== public_key)
      throw invalidArgument('public_key', 'one_key_per_replica', `${file}: ${replica_id} is given two different public keys`);
    keys[replica_id] = public_key;
  }
  return keys;
}
