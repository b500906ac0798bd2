import { openRedisRegisteredSources } from '../../stores/redis/redis-registered-sources.js';
import { openInThrowawayRedisPalace } from '../helpers/redis.js';
import { describeRegisteredSourcesContract } from './registered-sources.contract.js';

// No skip when Redis is down: opening fails with store_unavailable and every test fails.
describeRegisteredSourcesContract('cluster (Redis)', async () => {
  const { store: sources, cleanup } = await openInThrowawayRedisPalace('contract-sources', openRedisRegisteredSources);
  return { sources, cleanup };
});
