import { openRedisJobStore } from '../../stores/redis/redis-job-store.js';
import { openInThrowawayRedisPalace } from '../helpers/redis.js';
import type { Json } from './job-store.contract.js';
import { describeJobStoreContract } from './job-store.contract.js';

// No skip when Redis is down: opening fails with store_unavailable and every test fails.
describeJobStoreContract('cluster (Redis)', async () => {
  const { store: jobs, cleanup } = await openInThrowawayRedisPalace('contract-jobs', openRedisJobStore<Json, Json>);
  return { jobs, cleanup };
});
