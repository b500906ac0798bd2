import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../app/config.js';
import { RedisConnections } from '../../stores/redis/connection.js';
import { openRedisLocks } from '../../stores/redis/redis-locks.js';
import { openRedisLogstream } from '../../stores/redis/logstream/redis-logstream.js';
import { dropRedisPalace } from '../helpers/redis.js';
import { withCleanup } from '../helpers/tmp.js';
import { describeLogstreamSyncContract } from './logstream-sync.contract.js';

// No skip when Redis is down: opening fails with store_unavailable and every test fails.
describeLogstreamSyncContract('cluster (Redis)', async (identity) => {
  const options = { url: loadConfig().redis.url, palaceName: `contract-sync-${randomBytes(6).toString('hex')}` };
  if (identity) {
    const admin = new RedisConnections(options);
    await admin.command().set(`${admin.prefix}ls:replica`, identity.replicaId);
    await admin.command().set(`${admin.prefix}ls:replica_key`, identity.signingKey);
    await admin.close();
  }
  const logstream = await openRedisLogstream(options);
  const locks = await openRedisLocks(options);
  return withCleanup({ logstream, locks }, () => dropRedisPalace(options));
});
