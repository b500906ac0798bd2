import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../core/config.js';
import { RedisConnections } from '../../stores/redis/connection.js';
import { openRedisLocks } from '../../stores/redis/redis-locks.js';
import { describeLocksContract } from './locks.contract.js';

// No skip when Redis is down: opening fails with store_unavailable and every test fails.
describeLocksContract('cluster (Redis)', async () => {
  const options = { url: loadConfig().redis.url, palaceName: `contract-locks-${randomBytes(6).toString('hex')}` };
  const locks = await openRedisLocks(options);
  return {
    locks,
    async cleanup() {
      await locks.close();
      const admin = new RedisConnections(options);
      await admin.dropPalace();
      await admin.close();
    },
  };
});
