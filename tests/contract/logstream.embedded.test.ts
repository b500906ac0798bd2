import { openSqliteLogstream } from '../../stores/embedded/logstream/sqlite-logstream.js';
import { openInTempDir } from '../helpers/tmp.js';
import { describeLogstreamContract } from './logstream.contract.js';

describeLogstreamContract('embedded (SQLite)', async () => {
  const { store: logstream, cleanup } = await openInTempDir('mp-logstream-contract-', (dir) => openSqliteLogstream(dir));
  return { logstream, cleanup };
});
