import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../core/config.js';
import { RedisConnections } from '../../stores/redis/connection.js';
import { openRedisLogstream } from '../../stores/redis/redis-logstream.js';
import { describeLogstreamContract } from './logstream.contract.js';

// No skip when Redis is down: opening fails with store_unavailable and every test fails.
describeLogstreamContract('cluster (Redis)', async () => {
  const options = { url: loadConfig().redis.url, palaceName: `contract-ls-${randomBytes(6).toString('hex')}` };
  const logstream = await openRedisLogstream(options);
  return {
    logstream,
    async cleanup() {
      await logstream.close();
      const admin = new RedisConnections(options);
      await admin.dropPalace();
      await admin.close();
    },
  };
});
