/**
 * The palace's replica identity (docs/logstream.md §8.1): `replica.json` in the palace directory,
 * minted once. Concurrent first callers race on a hard link, which the file system grants to
 * exactly one of them; the others adopt the winner. A file of any other shape is an error and
 * is never replaced, because two ids for one palace would fork its provenance.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PalaceError } from '../../../core/errors.js';
import { linkIntoPlaceOnce } from './mint-once.js';

const REPLICA_RE = /^rep_(?:[0-9a-f]{32}|[0-9a-f]{12})$/;

function readReplicaFile(file: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new PalaceError('internal', `${file} is unreadable (${(e as Error).message}); refusing to mint a second replica id — restore or delete it explicitly`,
      { details: { file } });
  }
  const id = (parsed as { replica_id?: unknown } | null)?.replica_id;
  if (typeof id !== 'string' || !REPLICA_RE.test(id)) {
    throw new PalaceError('internal',
      `${file} holds no valid replica_id (expected rep_ + 32 or 12 lowercase hex); refusing to mint a second replica id — restore or delete it explicitly`, {
      details: { file },
    });
  }
  return id;
}

export function loadOrMintReplicaId(palaceDir: string): string {
  const file = path.join(palaceDir, 'replica.json');
  if (fs.existsSync(file)) return readReplicaFile(file);
  const candidate = `rep_${randomBytes(16).toString('hex')}`;
  linkIntoPlaceOnce(file, `${JSON.stringify({ replica_id: candidate, minted_at_note: 'RFC 004 step 0' })}\n`);
  return readReplicaFile(file);
}
