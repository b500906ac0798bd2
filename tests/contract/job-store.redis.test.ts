import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../core/config.js';
import { RedisConnections } from '../../stores/redis/connection.js';
import { openRedisJobStore } from '../../stores/redis/redis-job-store.js';
import { describeJobStoreContract } from './job-store.contract.js';

// No skip when Redis is down: opening fails with store_unavailable and every test fails.
describeJobStoreContract('cluster (Redis)', async () => {
  const options = { url: loadConfig().redis.url, palaceName: `contract-jobs-${randomBytes(6).toString('hex')}` };
  const jobs = await openRedisJobStore(options);
  return {
    jobs,
    async cleanup() {
      await jobs.close();
      const admin = new RedisConnections(options);
      await admin.dropPalace();
      await admin.close();
    },
  };
});
