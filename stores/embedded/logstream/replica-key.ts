/**
 * The palace's signing key (issue 24, M1): an Ed25519 key as PKCS#8 PEM in `replica.key` beside
 * `replica.json`, mode 0600, minted once like the replica id (concurrent first callers race on a
 * hard link; the losers adopt the winner). It travels with the palace directory, so a restore
 * that keeps the replica id keeps the key that signed its events.
 */
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PalaceError } from '../../../core/errors.js';
import { linkIntoPlaceOnce } from './mint-once.js';

export const REPLICA_KEY_FILE = 'replica.key';

function readKeyFile(file: string): string {
  const pem = fs.readFileSync(file, 'utf8');
  if (!pem.includes('BEGIN PRIVATE KEY')) {
    throw new PalaceError('internal', `${file} holds no PKCS#8 private key; refusing to mint a second signing key — restore or delete it explicitly`, {
      details: { file },
    });
  }
  return pem;
}

export function loadOrMintReplicaKey(palaceDir: string): string {
  const file = path.join(palaceDir, REPLICA_KEY_FILE);
  if (fs.existsSync(file)) return readKeyFile(file);
  const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  linkIntoPlaceOnce(file, pem);
  return readKeyFile(file);
}
