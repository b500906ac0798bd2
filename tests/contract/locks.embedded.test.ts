import { openSqliteLocks } from '../../stores/embedded/sqlite-locks.js';
import { openInTempDir } from '../helpers/tmp.js';
import { describeLocksContract } from './locks.contract.js';

describeLocksContract('embedded (SQLite)', async () => {
  const { store: locks, cleanup } = await openInTempDir('mp-locks-contract-', openSqliteLocks);
  return { locks, cleanup };
});
