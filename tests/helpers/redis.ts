/**
 * Redis-backed stores for contract tests, each under a throwaway palace name whose keys are
 * dropped after. No skip when Redis is down: opening fails with store_unavailable and the test fails.
 */
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../app/config.js';
import { RedisConnections, type RedisConnectionOptions } from '../../stores/redis/connection.js';
import { withCleanup } from './tmp.js';

export interface ThrowawayRedisStore<S> {
  store: S;
  /** Closes the store, then drops every key of its palace. */
  cleanup(): Promise<void>;
}

/** Drops every key of the palace `options` names. */
export async function dropRedisPalace(options: RedisConnectionOptions): Promise<void> {
  const admin = new RedisConnections(options);
  await admin.dropPalace();
  await admin.close();
}

/** A store opened by `open` under the palace name `<prefix>-<random hex>`. */
export async function openInThrowawayRedisPalace<S extends { close(): Promise<void> }>(prefix: string,
  open: (options: RedisConnectionOptions) => Promise<S>): Promise<ThrowawayRedisStore<S>> {
  const options = { url: loadConfig().redis.url, palaceName: `${prefix}-${randomBytes(6).toString('hex')}` };
  const store = await open(options);
  return withCleanup({ store }, () => dropRedisPalace(options));
}
