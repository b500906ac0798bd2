import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSqliteLocks } from '../../stores/embedded/sqlite-locks.js';
import { describeLocksContract } from './locks.contract.js';

describeLocksContract('embedded (SQLite)', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mp-locks-contract-'));
  const locks = await openSqliteLocks(dir);
  return {
    locks,
    async cleanup() {
      await locks.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});
