/**
 * The cluster profile's JobStore on Redis (keys under `mempalace:{<palace>}:jobs:`):
 *
 * - `job:<id>` hash per job (JSON text for spec, progress, cursor);
 * - `all`: every job, a sorted set ordered by member `<created_at>\0<job_id>` (all scores 0,
 *   lexical order), so "newest first" is one reverse range;
 * - `running:<lock_key>`: the same members for jobs whose state is `running`, kept in step with
 *   the hash inside the same function call;
 * - `events:<id>`: progress snapshots as a stream with ids `<seq>-0` from one counter `event_seq`,
 *   so `seq` grows across all jobs as in the embedded store;
 * - `manifest:<id>`: a list of JSON entries, written page by page to `manifest:<id>:staging` and
 *   renamed over the old one at the end, read in pages with LRANGE;
 * - `blob:<key>`: JSON text; `manifests` and `blobs` index the ids lexically so a prefix drop is
 *   a range query, not a keyspace scan.
 *
 * Registered sources live under the same prefix (redis-registered-sources.ts).
 */
import { PalaceError } from '../../core/errors.js';
import type { JobRecord, JobStore, ManifestEntry } from '../ports/job-store.js';
import type { RedisConnections } from './connection.js';
import { REDIS_STORE, guardRedis, type RedisConnectionOptions } from './connection.js';
import { FunctionLibrary, connectWithLibrary } from './functions.js';
import { RedisLibraryStore } from './library-store.js';

const VERSION = 'v1';
const CREATE = `jobs_create_${VERSION}`;
const UPDATE = `jobs_update_${VERSION}`;
/** Entries per RPUSH while a manifest is written. */
const MANIFEST_BATCH = 1_000;

// create keys: job hash, all, running index of its lock key. args: member, then field/value pairs.
// update keys: job hash, running index, events stream, event counter. args: state, progress,
// updated_at, cursor flag ('1' to set), cursor.
const library = new FunctionLibrary(`#!lua name=mempalace_jobs_${VERSION}
redis.register_function('${CREATE}', function(keys, args)
  if redis.call('EXISTS', keys[1]) == 1 then return 0 end
  local fields = {}
  for i = 2, #args do fields[#fields + 1] = args[i] end
  redis.call('HSET', keys[1], unpack(fields))
  redis.call('ZADD', keys[2], 0, args[1])
  if redis.call('HGET', keys[1], 'state') == 'running' then redis.call('ZADD', keys[3], 0, args[1]) end
  return 1
end)

redis.register_function('${UPDATE}', function(keys, args)
  local created = redis.call('HGET', keys[1], 'created_at')
  if created then
    redis.call('HSET', keys[1], 'state', args[1], 'progress', args[2], 'updated_at', args[3])
    if args[4] == '1' then redis.call('HSET', keys[1], 'cursor', args[5]) end
    local member = created .. '\\0' .. redis.call('HGET', keys[1], 'job_id')
    if args[1] == 'running' then redis.call('ZADD', keys[2], 0, member) else redis.call('ZREM', keys[2], member) end
  end
  local seq = redis.call('INCR', keys[4])
  redis.call('XADD', keys[3], string.format('%d-0', seq), 'p', args[2])
  return seq
end)
`);

const SEPARATOR = '\0';
/** Suffix of the list a manifest is written to before it replaces the old one. */
const STAGING = ':staging';

function toRecord<Spec, Progress>(h: Record<string, string>): JobRecord<Spec, Progress> {
  return {
    job_id: h.job_id!,
    kind: h.kind!,
    lock_key: h.lock_key!,
    state: h.state!,
    spec: JSON.parse(h.spec!) as Spec,
    progress: JSON.parse(h.progress!) as Progress,
    ...(h.cursor === undefined ? {} : { cursor: JSON.parse(h.cursor) as unknown }),
    created_at: h.created_at!,
    updated_at: h.updated_at!,
  };
}

/** Upper bound of a lexical prefix range: no UTF-8 text contains the byte 0xFF. */
function prefixEnd(prefix: string): Buffer {
  return Buffer.concat([Buffer.from(`[${prefix}`, 'utf8'), Buffer.from([0xff])]);
}

export class RedisJobStore<Spec = unknown, Progress = unknown> extends RedisLibraryStore implements JobStore<Spec, Progress> {
  private constructor(connections: RedisConnections) {
    super(connections);
  }

  static async open<Spec = unknown, Progress = unknown>(options: RedisConnectionOptions): Promise<RedisJobStore<Spec, Progress>> {
    return connectWithLibrary(options, library, (connections) => new RedisJobStore<Spec, Progress>(connections));
  }

  private key(...parts: string[]): string {
    return this.connections.key('jobs', ...parts);
  }

  async create(r: JobRecord<Spec, Progress>): Promise<void> {
    const fields = ['job_id', r.job_id, 'kind', r.kind, 'lock_key', r.lock_key, 'state', r.state, 'spec', JSON.stringify(r.spec), 'progress',
      JSON.stringify(r.progress), 'created_at', r.created_at, 'updated_at', r.updated_at,
      ...(r.cursor === undefined ? [] : ['cursor', JSON.stringify(r.cursor)])];
    const created = await guardRedis(() =>
      library.call(this.conn, CREATE, [this.key('job', r.job_id), this.key('all'), this.key('running', r.lock_key)], [r.created_at + SEPARATOR + r.job_id,
        ...fields])
    );
    if (created !== 1)
      throw new PalaceError('already_exists', `job ${r.job_id} already exists`, { field: 'job_id', rule: 'unique', store: REDIS_STORE,
        details: { job_id: r.job_id } });
  }

  async update(jobId: string, state: string, progress: Progress, cursor?: unknown): Promise<void> {
    await guardRedis(async () => {
      // The lock key of a job never changes, so reading it first cannot race with the update.
      const lockKey = (await this.conn.hget(this.key('job', jobId), 'lock_key')) ?? '';
      await library.call(this.conn, UPDATE, [this.key('job', jobId), this.key('running', lockKey), this.key('events', jobId), this.key('event_seq')], [state,
        JSON.stringify(progress), new Date().toISOString(), cursor === undefined ? '0' : '1', cursor === undefined ? '' : JSON.stringify(cursor)]);
    });
  }

  async get(jobId: string): Promise<JobRecord<Spec, Progress> | undefined> {
    const h = await guardRedis(() => this.conn.hgetall(this.key('job', jobId)));
    return h.job_id === undefined ? undefined : toRecord<Spec, Progress>(h);
  }

  async running(lockKey: string): Promise<JobRecord<Spec, Progress> | undefined> {
    const [member] = await guardRedis(() => this.conn.zrange(this.key('running', lockKey), '+', '-', 'BYLEX', 'REV', 'LIMIT', 0, 1));
    if (member === undefined) return undefined;
    const job = await this.get(member.slice(member.indexOf(SEPARATOR) + 1));
    return job?.state === 'running' ? job : undefined;
  }

  async list(limit: number): Promise<JobRecord<Spec, Progress>[]> {
    return guardRedis(async () => {
      const members = await this.conn.zrange(this.key('all'), '+', '-', 'BYLEX', 'REV', 'LIMIT', 0, limit);
      if (members.length === 0) return [];
      const pipeline = this.conn.pipeline();
      for (const m of members) pipeline.hgetall(this.key('job', m.slice(m.indexOf(SEPARATOR) + 1)));
      const results = (await pipeline.exec()) ?? [];
      return results.flatMap(([err, h]) => {
        if (err) throw err;
        const hash = h as Record<string, string>;
        return hash.job_id === undefined ? [] : [toRecord<Spec, Progress>(hash)];
      });
    });
  }

  async events(jobId: string, afterSeq: number, limit: number): Promise<{ seq: number; progress: Progress }[]> {
    const start = afterSeq > 0 ? `(${afterSeq}-0` : '-';
    const entries = await guardRedis(() => this.conn.xrange(this.key('events', jobId), start, '+', 'COUNT', limit));
    return entries.map(([id, fields]) => ({ seq: Number.parseInt(id, 10), progress: JSON.parse(fields[1]!) as Progress }));
  }

  async writeManifest(manifestId: string, pages: AsyncIterable<ManifestEntry[]>): Promise<number> {
    const key = this.key('manifest', manifestId);
    // Pages go to a staging list, one RPUSH each; RENAME swaps the whole list in at once. The
    // staging id is indexed too, so dropping the job's artifacts drops a scan that died midway.
    const stagingId = `${manifestId}${STAGING}`;
    const staging = this.key('manifest', stagingId);
    await guardRedis(() => this.conn.multi().del(staging).zadd(this.key('manifests'), 0, stagingId).exec());
    let count = 0;
    try {
      for await (const page of pages) {
        for (let i = 0; i < page.length; i += MANIFEST_BATCH) {
          await guardRedis(() => this.conn.rpush(staging, ...page.slice(i, i + MANIFEST_BATCH).map((e) => JSON.stringify(e))));
        }
        count += page.length;
      }
    } catch (e) {
      await this.conn.del(staging).catch(() => undefined);
      throw e;
    }
    await guardRedis(async () => {
      // An empty manifest has no staging list: the id then names no list at all.
      const tx = this.conn.multi().del(key);
      if (count > 0) tx.rename(staging, key);
      const results = await tx.zadd(this.key('manifests'), 0, manifestId).zrem(this.key('manifests'), stagingId).exec();
      const failed = results?.find(([err]) => err);
      if (!results || failed) throw failed?.[0] ?? new Error('manifest transaction was discarded');
    });
    return count;
  }

  async readManifest(manifestId: string, offset: number, count: number): Promise<ManifestEntry[]> {
    if (count <= 0) return [];
    const rows = await guardRedis(() => this.conn.lrange(this.key('manifest', manifestId), offset, offset + count - 1));
    return rows.map((r) => JSON.parse(r) as ManifestEntry);
  }

  async putBlob(key: string, value: unknown): Promise<void> {
    await guardRedis(() => this.conn.multi().set(this.key('blob', key), JSON.stringify(value)).zadd(this.key('blobs'), 0, key).exec());
  }

  async getBlob(key: string): Promise<unknown> {
    const text = await guardRedis(() => this.conn.get(this.key('blob', key)));
    return text === null ? undefined : (JSON.parse(text) as unknown);
  }

  async dropArtifacts(prefix: string): Promise<void> {
    await guardRedis(async () => {
      for (const [index, kind] of [['manifests', 'manifest'], ['blobs', 'blob']] as const) {
        const ids = await this.conn.zrangebylex(this.key(index), `[${prefix}`, prefixEnd(prefix));
        for (let i = 0; i < ids.length; i += MANIFEST_BATCH) {
          const batch = ids.slice(i, i + MANIFEST_BATCH);
          await this.conn.multi().unlink(...batch.map((id) => this.key(kind, id))).zrem(this.key(index), ...batch).exec();
        }
      }
    });
  }
}

export function openRedisJobStore<Spec = unknown, Progress = unknown>(options: RedisConnectionOptions): Promise<RedisJobStore<Spec, Progress>> {
  return RedisJobStore.open<Spec, Progress>(options);
}
