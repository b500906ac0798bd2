/**
 * Where a palace lives on Redis, shared by every client of the palace's Redis: the Redis adapters
 * (stores/redis/) and the BullMQ queues (jobs/engines/queues/), whose keys sit under the same
 * prefix. Pure: no client is made here.
 *
 * Keys of one palace share `mempalace:{<palace>}:`; the braces make the palace name the Redis
 * Cluster hash tag, so every key of a palace lives in one slot (atomic functions need that).
 */
import { invalidArgument } from '../../core/errors.js';

const PALACE_NAME_RE = /^[^{}\s]{1,128}$/;

/** The key prefix of one palace: `mempalace:{<palace>}:`. */
export function palacePrefix(palaceName: string): string {
  if (typeof palaceName !== 'string' || !PALACE_NAME_RE.test(palaceName)) {
    throw invalidArgument('palace_name', 'redis_hash_tag',
      'palace_name must be 1–128 characters without braces or whitespace (it is the Redis hash tag of the palace)');
  }
  return `mempalace:{${palaceName}}:`;
}

/** The server a client connects to, as both ioredis and BullMQ take it. */
export interface RedisServer {
  host: string;
  port: number;
  username?: string;
  password?: string;
  tls?: Record<string, never>;
  db: number;
}

/** Host, port, credentials, TLS and database of a `redis://` or `rediss://` URL. */
export function redisServerOptions(redisUrl: string): RedisServer {
  const refused = () => invalidArgument('redis.url', 'redis_url', `redis.url must be a redis:// or rediss:// URL, got ${JSON.stringify(redisUrl)}`);
  let url: URL;
  try {
    url = new URL(redisUrl);
  } catch {
    throw refused();
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw refused();
  const db = url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0;
  return {
    host: url.hostname || '127.0.0.1',
    port: url.port ? Number(url.port) : 6379,
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
    db: Number.isInteger(db) ? db : 0,
  };
}
