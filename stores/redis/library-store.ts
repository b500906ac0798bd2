/**
 * What the Redis stores built on one function library share (audit log, job store, locks,
 * registered sources): the palace's connections, opened with the library loaded
 * (functions.ts `connectWithLibrary`), the command connection their calls go through, and one
 * close for them all.
 */
import type { RedisConnections } from './connection.js';

export abstract class RedisLibraryStore {
  protected constructor(readonly connections: RedisConnections) {}

  protected get conn() {
    return this.connections.command();
  }

  async close(): Promise<void> {
    await this.connections.close();
  }
}
