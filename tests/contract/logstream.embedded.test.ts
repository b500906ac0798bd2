import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSqliteLogstream } from '../../stores/embedded/sqlite-logstream.js';
import { describeLogstreamContract } from './logstream.contract.js';

describeLogstreamContract('embedded (SQLite)', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mp-logstream-contract-'));
  const logstream = await openSqliteLogstream(dir);
  return {
    logstream,
    async cleanup() {
      await logstream.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});
