// No skip when an engine is down: opening fails with store_unavailable and every test fails.
import { openStores } from '../../stores/open.js';
import { clusterConfig, dropClusterPalace } from '../helpers/cluster-palace.js';
import { describeBackupPortsContract } from './backup-ports.contract.js';

describeBackupPortsContract('cluster (OpenSearch, Neo4j, Redis)', async () => {
  const config = clusterConfig('contract-bk');
  const stores = await openStores(config);
  return {
    ...stores,
    async cleanup() {
      await stores.close();
      await dropClusterPalace(config);
    },
  };
});
