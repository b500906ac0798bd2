import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteJobStore } from '../../stores/embedded/sqlite-job-store.js';
import { describeJobStoreContract } from './job-store.contract.js';

describeJobStoreContract('embedded (SQLite)', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mp-jobstore-contract-'));
  const jobs = new SqliteJobStore(path.join(dir, 'jobs.sqlite3'));
  return {
    jobs,
    async cleanup() {
      await jobs.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});
