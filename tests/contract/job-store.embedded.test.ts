import path from 'node:path';
import { SqliteJobStore } from '../../stores/embedded/sqlite-job-store.js';
import { openInTempDir } from '../helpers/tmp.js';
import type { Json } from './job-store.contract.js';
import { describeJobStoreContract } from './job-store.contract.js';

describeJobStoreContract('embedded (SQLite)', async () => {
  const { store: jobs, cleanup } = await openInTempDir('mp-jobstore-contract-', async (dir) => new SqliteJobStore<Json, Json>(path.join(dir, 'jobs.sqlite3')));
  return { jobs, cleanup };
});
