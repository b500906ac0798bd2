import { openSqliteLocks } from '../../stores/embedded/sqlite-locks.js';
import { openSqliteLogstream } from '../../stores/embedded/sqlite-logstream.js';
import { makeTempDir, removeDir } from '../helpers/tmp.js';
import { describeLogstreamSyncContract } from './logstream-sync.contract.js';

describeLogstreamSyncContract('embedded (SQLite)', async () => {
  const dir = makeTempDir('mp-logstream-sync-');
  const logstream = await openSqliteLogstream(dir);
  const locks = await openSqliteLocks(dir);
  return {
    logstream, locks,
    async cleanup() {
      await logstream.close();
      await locks.close();
      removeDir(dir);
    },
  };
});
