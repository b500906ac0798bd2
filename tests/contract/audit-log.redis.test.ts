import { openRedisAuditLog } from '../../stores/redis/redis-audit-log.js';
import type { AuditLog } from '../../stores/ports/audit-log.js';
import { openInThrowawayRedisPalace } from '../helpers/redis.js';
import { describeAuditLogContract } from './audit-log.contract.js';

// No skip when Redis is down: opening fails with store_unavailable and every test fails.
describeAuditLogContract('cluster (Redis)', async () => {
  let options: Parameters<typeof openRedisAuditLog>[0] | undefined;
  const { store: log, cleanup } = await openInThrowawayRedisPalace('contract-audit', (o) => {
    options = o;
    return openRedisAuditLog(o);
  });
  const others: AuditLog[] = [];
  return {
    log,
    another: async () => {
      const other = await openRedisAuditLog(options!);
      others.push(other);
      return other;
    },
    async cleanup() {
      await Promise.all(others.map((o) => o.close()));
      await cleanup();
    },
  };
});
