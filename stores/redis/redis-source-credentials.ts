/**
 * The cluster profile's source credentials: one hash of the palace (`mempalace:{<palace>}:
 * source_credentials`, field = URL without credential, value = JSON). Workers clone, so the
 * secret must be readable where jobs run; Redis already holds the palace and is reached by every
 * API replica and worker, while Temporal histories, job records and BullMQ payloads — which are
 * listed, shown and kept — carry only the URL without it.
 */
import type { GitCredential } from '../../core/url-credentials.js';
import type { SourceCredentials } from '../ports/source-credentials.js';
import { RedisConnections, guardRedis, type RedisConnectionOptions } from './connection.js';

export class RedisSourceCredentials implements SourceCredentials {
  private readonly connections: RedisConnections;

  constructor(options: RedisConnectionOptions) {
    this.connections = new RedisConnections(options);
  }

  private get key(): string {
    return this.connections.key('source_credentials');
  }

  async put(url: string, credential: GitCredential): Promise<void> {
    await guardRedis(() => this.connections.command().hset(this.key, url, JSON.stringify({ username: credential.username, password: credential.password })));
  }

  async get(url: string): Promise<GitCredential | undefined> {
    const text = await guardRedis(() => this.connections.command().hget(this.key, url));
    return text === null ? undefined : (JSON.parse(text) as GitCredential);
  }

  async remove(url: string): Promise<boolean> {
    return (await guardRedis(() => this.connections.command().hdel(this.key, url))) > 0;
  }

  close(): Promise<void> {
    return this.connections.close();
  }
}
