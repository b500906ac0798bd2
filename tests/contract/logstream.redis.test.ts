import { openRedisLogstream } from '../../stores/redis/logstream/redis-logstream.js';
import { openInThrowawayRedisPalace } from '../helpers/redis.js';
import { describeLogstreamContract } from './logstream.contract.js';

// No skip when Redis is down: opening fails with store_unavailable and every test fails.
describeLogstreamContract('cluster (Redis)', async () => {
  const { store: logstream, cleanup } = await openInThrowawayRedisPalace('contract-ls', openRedisLogstream);
  return { logstream, cleanup };
});
