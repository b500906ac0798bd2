import fs from 'node:fs';
import path from 'node:path';
import { openSqliteLocks } from '../../stores/embedded/sqlite-locks.js';
import { openSqliteLogstream } from '../../stores/embedded/logstream/sqlite-logstream.js';
import { makeTempDir, removeDir, withCleanup } from '../helpers/tmp.js';
import { describeLogstreamSyncContract } from './logstream-sync.contract.js';

describeLogstreamSyncContract('embedded (SQLite)', async (identity) => {
  const dir = makeTempDir('mp-logstream-sync-');
  if (identity) {
    fs.writeFileSync(path.join(dir, 'replica.json'), JSON.stringify({ replica_id: identity.replicaId, minted_at_note: 'RFC 004 step 0' }));
    fs.writeFileSync(path.join(dir, 'replica.key'), identity.signingKey, { mode: 0o600 });
  }
  const logstream = await openSqliteLogstream(dir);
  const locks = await openSqliteLocks(dir);
  return withCleanup({ logstream, locks }, () => removeDir(dir));
});
