/**
 * The cluster profile's registered sources on Redis: JSON per source id in the hash
 * `mempalace:{<palace>}:jobs:sources`, the latest refresh in `…:jobs:source_refresh` (the keys
 * earlier versions wrote beside the job records, so a deployed palace keeps its sources).
 * Two hashes, so re-registering a source keeps its refresh; a re-registration keeps who first
 * added the source, and a refresh recorded for a source removed meanwhile is refused, each inside
 * one function call.
 */
import type { RegisteredSource, RegisteredSources, SourceRefresh } from '../ports/registered-sources.js';
import type { RedisConnections } from './connection.js';
import { guardRedis, type RedisConnectionOptions } from './connection.js';
import { FunctionLibrary, connectWithLibrary } from './functions.js';
import { RedisLibraryStore } from './library-store.js';

const VERSION = 'v2';
const PUT = `sources_put_${VERSION}`;
const SET_REFRESH = `sources_set_refresh_${VERSION}`;
// keys: sources hash, refresh hash. PUT args: source id, record JSON, refresh JSON or ''; SET_REFRESH args: source id, refresh JSON.
const library = new FunctionLibrary(`#!lua name=mempalace_sources_${VERSION}
redis.register_function('${PUT}', function(keys, args)
  local record = args[2]
  local old = redis.call('HGET', keys[1], args[1])
  if old then
    local first = cjson.decode(old)
    local replacing = cjson.decode(record)
    replacing.added_by = first.added_by
    replacing.added_at = first.added_at
    record = cjson.encode(replacing)
  end
  redis.call('HSET', keys[1], args[1], record)
  if args[3] ~= '' then redis.call('HSET', keys[2], args[1], args[3]) end
  return 1
end)
redis.register_function('${SET_REFRESH}', function(keys, args)
  if redis.call('HEXISTS', keys[1], args[1]) == 0 then return 0 end
  redis.call('HSET', keys[2], args[1], args[2])
  return 1
end)
`);

function withRefresh(record: string, refresh: string | null): RegisteredSource {
  const source = JSON.parse(record) as RegisteredSource;
  return refresh === null ? source : { ...source, last_refresh: JSON.parse(refresh) as SourceRefresh };
}

export class RedisRegisteredSources extends RedisLibraryStore implements RegisteredSources {
  private constructor(connections: RedisConnections) {
    super(connections);
  }

  static async open(options: RedisConnectionOptions): Promise<RedisRegisteredSources> {
    return connectWithLibrary(options, library, (connections) => new RedisRegisteredSources(connections));
  }

  private get sourcesKey(): string {
    return this.connections.key('jobs', 'sources');
  }

  private get refreshKey(): string {
    return this.connections.key('jobs', 'source_refresh');
  }

  async put(source: RegisteredSource): Promise<void> {
    const { last_refresh: refresh, ...record } = source;
    await guardRedis(() =>
      library.call(this.conn, PUT, [this.sourcesKey, this.refreshKey], [source.source_id, JSON.stringify(record), refresh ? JSON.stringify(refresh) : ''])
    );
  }

  async get(sourceId: string): Promise<RegisteredSource | undefined> {
    const [record, refresh] = await guardRedis(() =>
      this.conn.multi().hget(this.sourcesKey, sourceId).hget(this.refreshKey, sourceId).exec().then((r) => (r ?? []).map(([, v]) => v as string | null))
    );
    return record ? withRefresh(record, refresh ?? null) : undefined;
  }

  async list(): Promise<RegisteredSource[]> {
    const [records, refreshes] = await guardRedis(async () => {
      const r = (await this.conn.multi().hgetall(this.sourcesKey).hgetall(this.refreshKey).exec()) ?? [];
      return r.map(([, v]) => v as Record<string, string>);
    });
    return Object.keys(records ?? {}).sort().map((id) => withRefresh(records![id]!, refreshes?.[id] ?? null));
  }

  async remove(sourceId: string): Promise<boolean> {
    const results = await guardRedis(() => this.conn.multi().hdel(this.sourcesKey, sourceId).hdel(this.refreshKey, sourceId).exec());
    return results?.[0]?.[1] === 1;
  }

  async setRefresh(sourceId: string, refresh: SourceRefresh): Promise<boolean> {
    const set = await guardRedis(() => library.call(this.conn, SET_REFRESH, [this.sourcesKey, this.refreshKey], [sourceId, JSON.stringify(refresh)]));
    return set === 1;
  }
}

export function openRedisRegisteredSources(options: RedisConnectionOptions): Promise<RedisRegisteredSources> {
  return RedisRegisteredSources.open(options);
}
