import { openRedisLocks } from '../../stores/redis/redis-locks.js';
import { openInThrowawayRedisPalace } from '../helpers/redis.js';
import { describeLocksContract } from './locks.contract.js';

// No skip when Redis is down: opening fails with store_unavailable and every test fails.
describeLocksContract('cluster (Redis)', async () => {
  const { store: locks, cleanup } = await openInThrowawayRedisPalace('contract-locks', openRedisLocks);
  return { locks, cleanup };
});
