import path from 'node:path';
import { SqliteRegisteredSources } from '../../stores/embedded/sqlite-registered-sources.js';
import { openInTempDir } from '../helpers/tmp.js';
import { describeRegisteredSourcesContract } from './registered-sources.contract.js';

describeRegisteredSourcesContract('embedded (SQLite)', async () => {
  const { store: sources, cleanup } = await openInTempDir('mp-sources-contract-', async (dir) => new SqliteRegisteredSources(path.join(dir, 'jobs.sqlite3')));
  return { sources, cleanup };
});
