/**
 * The cluster profile's logstream on Redis Streams (docs/logstream.md §11). The whole deployment is
 * one replica: every API process appends through the same Redis Functions, which assign `seq`
 * (`INCR`) and write the log entry `<seq>-0` in one atomic call, so there is one total order no
 * matter how many processes append. Index streams share the log's id space; waits block on the
 * store through a per-process `XREAD BLOCK` tailer. Nothing is trimmed or expired.
 *
 * The parts: logstream-codec.ts (events and artifacts as Redis fields), event-predicate.ts (the
 * query predicate), merge-cursor.ts (reading index streams in order), durability.ts (what an
 * acknowledged write means, durable mode) and server-checks.ts (what the server must provide).
 */
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { PalaceError } from '../../../core/errors.js';
import type { Logstream } from '../../ports/logstream/local-log.js';
import type { LogstreamReplication } from '../../ports/logstream/replication.js';
import { MAX_SEQ, type ArtifactDraft, type ArtifactRecord, type EventDraft, type EventQuery, type MeshState, type RemoteArtifact, type RemoteEvent,
  type ReplicatedEvent, type StoredArtifact, type StoredEvent } from '../../ports/logstream/records.js';
import { newStampedId } from '../../shared/logstream/ids.js';
import { waitForMatches } from '../../shared/logstream/wait.js';
import { REDIS_STORE, RedisConnections, guardRedis, redisFailure, type RedisConnectionOptions } from '../connection.js';
import { DurabilityPolicy, writeFailure, type DurabilityOptions } from './durability.js';
import { eventMatches } from './event-predicate.js';
import { FunctionLibrary } from '../functions.js';
import { appendedEvent, artifactArgs, artifactRecord, entryJson, entryToEvent, entryToReplicatedEvent, hashToArtifact, remoteArtifactArgs,
  type StreamEntry } from './codec.js';
import { LOGSTREAM_LIBRARY, LS_APPEND, LS_PUT_ARTIFACT, LS_SUBMIT_PATCH } from './functions.js';
import { LOGSTREAM_SYNC_LIBRARY, LS_APPLY_ARTIFACT, LS_APPLY_REMOTE, LS_RESERVE_SEQ } from './sync-functions.js';
import { LogTailer } from './tailer.js';
import { MergeCursor, RangeCursor } from './merge-cursor.js';
import { checkServer } from './server-checks.js';

const REPLICA_RE = /^rep_(?:[0-9a-f]{32}|[0-9a-f]{12})$/;
const library = new FunctionLibrary(LOGSTREAM_LIBRARY);
const syncLibrary = new FunctionLibrary(LOGSTREAM_SYNC_LIBRARY);

type AppendReply = [1, number, string, string, string?] | [0, 'duplicate_id' | 'unsafe_seq'] | [0, 'unknown_artifact', number];

const unsafeSeq = () =>
  new PalaceError('internal', `the next seq would pass ${MAX_SEQ}; refusing to mint an inexact number`, { store: REDIS_STORE, rule: 'safe_integer' });

/** Fields with an index stream, and the key segment of each (docs/logstream.md §11.2). */
const INDEXED = [
  ['correlation_id', 'corr'],
  ['to_agent', 'to'],
  ['from_agent', 'from'],
  ['stream', 'stream'],
  ['topic', 'topic'],
  ['type', 'type'],
] as const;

export type RedisLogstreamOptions = RedisConnectionOptions & DurabilityOptions;

export class RedisLogstream implements Logstream, LogstreamReplication {
  readonly storeName = REDIS_STORE;
  readonly connections: RedisConnections;
  private readonly tailer: LogTailer;
  private readonly durability: DurabilityPolicy;

  private constructor(
    options: RedisLogstreamOptions,
    private readonly replica: string,
    private readonly signingKeyPem: string,
    connections: RedisConnections,
  ) {
    this.connections = connections;
    this.durability = new DurabilityPolicy(connections, options);
    this.tailer = new LogTailer(connections, this.key('log'), this.key('seq'), entryToEvent);
  }

  /** Connect, check the server's settings, load the functions and read (or mint) the replica id. */
  static async open(options: RedisLogstreamOptions): Promise<RedisLogstream> {
    const connections = new RedisConnections(options);
    try {
      const conn = connections.command();
      await guardRedis(async () => {
        await checkServer(conn);
        await library.load(conn);
        await syncLibrary.load(conn);
      });
      const replicaKey = `${connections.prefix}ls:replica`;
      const replica = await guardRedis(async () => {
        await conn.set(replicaKey, `rep_${randomBytes(16).toString('hex')}`, 'NX');
        return conn.get(replicaKey);
      });
      if (!replica || !REPLICA_RE.test(replica)) {
        throw new PalaceError('internal',
          `${replicaKey} holds no valid replica id (expected rep_ + 32 or 12 lowercase hex); refusing to mint a second replica id — restore or delete it explicitly`,
          { store: REDIS_STORE, details: { key: replicaKey } });
      }
      // The signing key lives beside the replica id (issue 24, M1): every API process of the
      // deployment is the same replica and signs with the same key; minted once, SET NX.
      const keyKey = `${connections.prefix}ls:replica_key`;
      const signingKey = await guardRedis(async () => {
        await conn.set(keyKey, generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), 'NX');
        return conn.get(keyKey);
      });
      if (!signingKey || !signingKey.includes('BEGIN PRIVATE KEY')) {
        throw new PalaceError('internal', `${keyKey} holds no PKCS#8 private key; refusing to mint a second signing key — restore or delete it explicitly`, {
          store: REDIS_STORE,
          details: { key: keyKey },
        });
      }
      const store = new RedisLogstream(options, replica, signingKey, connections);
      await store.durability.confirm(true);
      return store;
    } catch (e) {
      await connections.close();
      throw redisFailure(e);
    }
  }

  private key(...parts: string[]): string {
    return this.connections.key('ls', ...parts);
  }

  private bucketKey(eventId: string): string {
    return this.key('eid', createHash('sha1').update(eventId).digest('hex').slice(0, 4));
  }

  private indexKey(segment: string, value: string): string {
    return this.key('x', segment, value);
  }

  async replicaId(): Promise<string> {
    return this.replica;
  }

  async signingKey(): Promise<string> {
    return this.signingKeyPem;
  }

  private indexKeysOf(draft: EventDraft): Set<string> {
    const indexKeys = new Set<string>();
    for (const [field, segment] of INDEXED) {
      const value = draft[field];
      if (value !== null) indexKeys.add(this.indexKey(segment, value));
    }
    return indexKeys;
  }

  /** Keys and args of one append (docs/logstream.md §11.4); `checkArtifacts` false for the event of a patch. */
  private appendCall(eventId: string, draft: EventDraft, checkArtifacts: boolean): { keys: string[]; args: string[] } {
    const indexKeys = this.indexKeysOf(draft);
    const artifactKeys = checkArtifacts ? draft.artifact_ids.map((id) => this.key('art', id)) : [];
    const fields = ['e', entryJson(eventId, draft)];
    const keys = [this.key('seq'), this.key('log'), this.bucketKey(eventId), this.key('vv'), this.key('ops', this.replica), this.key('hlc'), ...indexKeys,
      ...artifactKeys];
    return { keys, args: [eventId, this.replica, String(indexKeys.size), String(artifactKeys.length), ...fields] };
  }

  async append(draft: EventDraft): Promise<StoredEvent> {
    for (;;) {
      const id = newStampedId('evt', Date.now());
      const { keys, args } = this.appendCall(id, draft, true);
      let reply: AppendReply;
      try {
        await this.durability.confirm();
        reply = (await library.call(this.connections.command(), LS_APPEND, keys, args)) as AppendReply;
      } catch (e) {
        throw writeFailure(e, id);
      }
      if (reply[0] === 0) {
        if (reply[1] === 'duplicate_id') continue;
        if (reply[1] === 'unsafe_seq') throw unsafeSeq();
        const artifactId = draft.artifact_ids[(reply as [0, 'unknown_artifact', number])[2] - 1]!;
        throw new PalaceError('not_found', `unknown artifact ${artifactId}`, { field: 'artifact_ids', rule: 'known_artifact',
          details: { artifact_id: artifactId } });
      }
      await this.durability.afterWrite(id);
      return appendedEvent(id, draft, this.replica, Number(reply[1]), reply[2], reply[3]);
    }
  }

  async appendFor(targetId: string, build: (target: StoredEvent) => EventDraft): Promise<StoredEvent | null> {
    // Events are immutable and never deleted, so reading the target first cannot race (docs/logstream.md §11.4).
    const target = await this.getEvent(targetId);
    if (!target) return null;
    return this.append(build(target));
  }

  async putArtifact(draft: ArtifactDraft): Promise<ArtifactRecord> {
    for (;;) {
      const id = newStampedId('art', Date.now());
      let reply: [1, string] | [0, 'duplicate_id'];
      try {
        await this.durability.confirm();
        reply =
          (await library.call(this.connections.command(), LS_PUT_ARTIFACT, [this.key('art', id), this.key('blob', draft.sha256)],
            artifactArgs(id, draft, this.replica))) as typeof reply;
      } catch (e) {
        throw redisFailure(e);
      }
      if (reply[0] === 0) continue;
      await this.durability.afterWrite(id);
      return artifactRecord(id, draft, reply[1], this.replica);
    }
  }

  async submitPatch(artifact: ArtifactDraft, event: EventDraft): Promise<{ artifact: ArtifactRecord; event: StoredEvent }> {
    for (;;) {
      const now = Date.now();
      const artifactId = newStampedId('art', now);
      const eventId = newStampedId('evt', now);
      const draft: EventDraft = { ...event, artifact_ids: [artifactId] };
      const append = this.appendCall(eventId, draft, false);
      let reply: AppendReply;
      try {
        await this.durability.confirm();
        reply =
          (await library.call(this.connections.command(), LS_SUBMIT_PATCH, [this.key('art', artifactId), this.key('blob', artifact.sha256), ...append.keys], [
            ...artifactArgs(artifactId, artifact, this.replica),
            ...append.args,
          ])) as AppendReply;
      } catch (e) {
        throw writeFailure(e, eventId);
      }
      if (reply[0] === 0) {
        if (reply[1] === 'unsafe_seq') throw unsafeSeq();
        continue;
      }
      await this.durability.afterWrite(eventId);
      return { artifact: artifactRecord(artifactId, artifact, reply[4]!, this.replica),
        event: appendedEvent(eventId, draft, this.replica, Number(reply[1]), reply[2], reply[3]) };
    }
  }

  async getArtifact(id: string): Promise<StoredArtifact | null> {
    return guardRedis(async () => {
      const conn = this.connections.command();
      const h = await conn.hgetall(this.key('art', id));
      if (!h.id) return null;
      const content = await conn.get(this.key('blob', h.sha256!));
      if (content === null)
        throw new PalaceError('internal', `artifact ${id} has no stored content (blob ${h.sha256} is missing)`, { store: REDIS_STORE, details: { id } });
      return hashToArtifact(h, content);
    });
  }

  async seqOf(eventId: string): Promise<number | null> {
    return guardRedis(async () => {
      const seq = await this.connections.command().hget(this.bucketKey(eventId), eventId);
      return seq === null ? null : Number(seq);
    });
  }

  async getEvent(id: string): Promise<StoredEvent | null> {
    const seq = await this.seqOf(id);
    if (seq === null) return null;
    const [entry] = await guardRedis(() => this.connections.command().xrange(this.key('log'), `${seq}-0`, `${seq}-0`) as Promise<StreamEntry[]>);
    return entry ? entryToEvent(entry[0], entry[1]) : null;
  }

  async list(query: EventQuery): Promise<StoredEvent[]> {
    return guardRedis(() => this.query(query));
  }

  /** docs/logstream.md §11.5: drive by the shortest applicable index (or the log), filter with the full predicate. */
  private async query(q: EventQuery): Promise<StoredEvent[]> {
    const low = q.afterSeq !== undefined && q.afterSeq > 0 ? `(${q.afterSeq}-0` : '-';
    if (q.beforeSeq !== undefined && q.beforeSeq <= 1) return [];
    const high = q.beforeSeq !== undefined ? `(${q.beforeSeq}-0` : '+';
    const postFiltered = q.room !== undefined || q.status !== undefined || q.sinceCreatedAt !== undefined;
    // Driven by the log with nothing to filter out, the next `limit` entries are the answer.
    const chunk = Math.min(1_000, Math.max(2 * q.limit, 100));
    const conn = this.connections.command();

    const candidates: string[][] = [];
    for (const [field, segment] of INDEXED) {
      const value = q[field];
      if (value === undefined) continue;
      candidates.push(field === 'to_agent' ? [...new Set([this.indexKey(segment, value), this.indexKey(segment, '*')])] : [this.indexKey(segment, value)]);
    }
    const out: StoredEvent[] = [];
    if (candidates.length === 0) {
      const cursor = new RangeCursor(this.connections, this.key('log'), q.order, low, high, postFiltered ? chunk : q.limit);
      for (;;) {
        const entries = await cursor.take();
        if (entries.length === 0) return out;
        for (const [id, fields] of entries) {
          const e = entryToEvent(id, fields);
          if (eventMatches(e, q)) out.push(e);
          if (out.length === q.limit) return out;
        }
      }
    }

    const lengths = await pipelined<number>(conn, candidates.flat().map((k) => ['xlen', k]));
    let best: string[] | undefined;
    let bestLength = Infinity;
    let offset = 0;
    for (const keys of candidates) {
      const total = lengths.slice(offset, offset + keys.length).reduce((a, b) => a + b, 0);
      offset += keys.length;
      if (total === 0) return [];
      if (total < bestLength) {
        best = keys;
        bestLength = total;
      }
    }
    const merged = new MergeCursor(best!.map((k) => new RangeCursor(this.connections, k, q.order, low, high, chunk)), q.order);
    for (;;) {
      const seqs = await merged.next(chunk);
      if (seqs.length === 0) return out;
      const entries = await pipelined<StreamEntry[]>(conn, seqs.map((s) => ['xrange', this.key('log'), `${s}-0`, `${s}-0`]));
      for (const [entry] of entries) {
        if (!entry) continue;
        const e = entryToEvent(entry[0], entry[1]);
        if (eventMatches(e, q)) out.push(e);
        if (out.length === q.limit) return out;
      }
    }
  }

  async waitForEvents(query: Omit<EventQuery, 'order' | 'beforeSeq'>, timeoutMs: number, signal?: AbortSignal): Promise<StoredEvent[]> {
    const deadline = Date.now() + timeoutMs;
    const subscription = await this.tailer.subscribe((e) => eventMatches(e, query));
    return waitForMatches(deadline, subscription, () => this.list({ ...query, order: 'asc' }), signal);
  }

  async versionVector(): Promise<Record<string, number>> {
    return guardRedis(async () => {
      const raw = await this.connections.command().hgetall(this.key('vv'));
      return Object.fromEntries(Object.entries(raw).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => [k, Number(v)]));
    });
  }

  async opsAfter(origin: string, afterOriginSeq: number, limit: number): Promise<ReplicatedEvent[]> {
    return guardRedis(async () => {
      const conn = this.connections.command();
      const seqs = await conn.zrangebyscore(this.key('ops', origin), `(${afterOriginSeq}`, '+inf', 'LIMIT', 0, limit);
      const entries = await pipelined<StreamEntry[]>(conn, seqs.map((s) => ['xrange', this.key('log'), `${s}-0`, `${s}-0`]));
      return entries.flatMap(([entry]) => (entry ? [entryToReplicatedEvent(entry[0], entry[1])] : []));
    });
  }

  async originTop(origin: string, atMost: number): Promise<number> {
    return guardRedis(async () => {
      const [, score] = await this.connections.command().zrevrangebyscore(this.key('ops', origin), atMost, '-inf', 'WITHSCORES', 'LIMIT', 0, 1);
      return score === undefined ? 0 : Number(score);
    });
  }

  async hasArtifact(id: string): Promise<boolean> {
    return guardRedis(async () => (await this.connections.command().exists(this.key('art', id))) === 1);
  }

  async artifactSignature(id: string): Promise<string | null> {
    return guardRedis(async () => (await this.connections.command().hget(this.key('art', id), 'sig')) || null);
  }

  async applyRemoteArtifact(a: RemoteArtifact): Promise<boolean> {
    const args = remoteArtifactArgs(a);
    let reply: number;
    try {
      await this.durability.confirm();
      reply = Number(await syncLibrary.call(this.connections.command(), LS_APPLY_ARTIFACT, [this.key('art', a.id), this.key('blob', a.sha256)], args));
    } catch (e) {
      throw redisFailure(e);
    }
    if (reply === 1) await this.durability.afterWrite(a.id);
    return reply === 1;
  }

  async reserveOwnSeqAbove(originSeq: number): Promise<boolean> {
    if (!Number.isSafeInteger(originSeq) || originSeq >= MAX_SEQ)
      throw new PalaceError('invalid_argument', `origin_seq ${originSeq} leaves no exact seq above it`, { field: 'origin_seq', rule: 'safe_integer' });
    const reply = await guardRedis(async () =>
      Number(await syncLibrary.call(this.connections.command(), LS_RESERVE_SEQ, [this.key('seq')], [String(originSeq)]))
    );
    if (reply === -1)
      throw new PalaceError('invalid_argument', `origin_seq ${originSeq} leaves no exact seq above it`, { field: 'origin_seq', rule: 'safe_integer' });
    return reply === 1;
  }

  async applyRemoteEvent(e: RemoteEvent, options: { reclaimOwn?: boolean } = {}): Promise<'applied' | 'own_origin' | 'duplicate' | 'gap'> {
    if (e.origin_replica === this.replica && !options.reclaimOwn) return 'own_origin';
    const indexKeys = this.indexKeysOf(e);
    const artifactKeys = e.artifact_ids.map((id) => this.key('art', id));
    const keys = [this.key('seq'), this.key('log'), this.bucketKey(e.id), this.key('vv'), this.key('ops', e.origin_replica), this.key('hlc'), ...indexKeys,
      ...artifactKeys];
    const args = [e.id, e.origin_replica, String(indexKeys.size), String(artifactKeys.length), String(e.origin_seq), e.hlc, e.created_at, entryJson(e.id, e),
      e.sig ?? '', e.prev_origin_seq === undefined ? '' : String(e.prev_origin_seq), options.reclaimOwn ? '1' : '0'];
    let reply: [1, number] | [0, 'duplicate' | 'gap' | 'unsafe_seq'] | [0, 'unknown_artifact', number];
    try {
      await this.durability.confirm();
      reply = (await syncLibrary.call(this.connections.command(), LS_APPLY_REMOTE, keys, args)) as typeof reply;
    } catch (err) {
      throw writeFailure(err, e.id);
    }
    if (reply[0] === 0) {
      if (reply[1] === 'duplicate' || reply[1] === 'gap') return reply[1];
      if (reply[1] === 'unsafe_seq') throw unsafeSeq();
      const artifactId = e.artifact_ids[(reply as [0, 'unknown_artifact', number])[2] - 1]!;
      throw new PalaceError('not_found', `unknown artifact ${artifactId}`, { field: 'artifact_ids', rule: 'known_artifact',
        details: { artifact_id: artifactId } });
    }
    await this.durability.afterWrite(e.id);
    return 'applied';
  }

  async readMeshState(): Promise<MeshState> {
    return guardRedis(async () => {
      const conn = this.connections.command();
      const [peers, profiles, publishedAt] = await Promise.all([conn.hgetall(this.key('estate', 'peers')), conn.hgetall(this.key('estate', 'profiles')),
        conn.hget(this.key('estate', 'meta'), 'published_at')]);
      const parsed = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k, JSON.parse(v) as Record<string, unknown>]));
      return { peers: parsed(peers), profiles: parsed(profiles), published_at: publishedAt };
    });
  }

  async publishMeshState(state: MeshState): Promise<void> {
    await guardRedis(async () => {
      const tx = this.connections.command().multi();
      for (const [name, records] of [['peers', state.peers], ['profiles', state.profiles]] as const) {
        const key = this.key('estate', name);
        tx.del(key);
        const entries = Object.entries(records).flatMap(([k, v]) => [k, JSON.stringify(v)]);
        if (entries.length > 0) tx.hset(key, ...entries);
      }
      if (state.published_at !== null) tx.hset(this.key('estate', 'meta'), 'published_at', state.published_at);
      const results = await tx.exec();
      for (const [err] of results ?? []) if (err) throw err;
    });
  }

  async scanArtifacts(cursor: string | undefined, limit: number): Promise<{ items: StoredArtifact[]; next?: string }> {
    const [next, keys] = await guardRedis(() => this.connections.command().scan(cursor ?? '0', 'MATCH', this.key('art', '*'), 'COUNT', limit));
    const prefix = this.key('art', '');
    const items: StoredArtifact[] = [];
    for (const key of keys) {
      const artifact = await this.getArtifact(key.slice(prefix.length));
      if (artifact) items.push(artifact);
    }
    return next === '0' ? { items } : { items, next };
  }

  async close(): Promise<void> {
    this.tailer.close();
    await this.connections.close();
  }
}

async function pipelined<T>(conn: ReturnType<RedisConnections['command']>, commands: [string, ...string[]][]): Promise<T[]> {
  if (commands.length === 0) return [];
  const results = await conn.pipeline(commands).exec();
  if (!results) throw new Error('pipeline was discarded');
  return results.map(([err, value]) => {
    if (err) throw err;
    return value as T;
  });
}

/** The composition root's entry point for the cluster profile. */
export function openRedisLogstream(options: RedisLogstreamOptions): Promise<RedisLogstream> {
  return RedisLogstream.open(options);
}
