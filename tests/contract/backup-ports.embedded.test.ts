import { loadConfig } from '../../app/config.js';
import { openStores } from '../../stores/open.js';
import { makeTempDir, removeDir } from '../helpers/tmp.js';
import { describeBackupPortsContract } from './backup-ports.contract.js';

describeBackupPortsContract('embedded (SQLite)', async () => {
  const dir = makeTempDir('mempalace-backup-ports-');
  const stores = await openStores(loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: dir }));
  return {
    ...stores,
    async cleanup() {
      await stores.close();
      removeDir(dir);
    },
  };
});
