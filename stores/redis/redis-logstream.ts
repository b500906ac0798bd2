/**
 * The cluster profile's logstream on Redis Streams (logstream.md §11). The whole deployment is
 * one replica: every API process appends through the same Redis Functions, which assign `seq`
 * (`INCR`) and write the log entry `<seq>-0` in one atomic call, so there is one total order no
 * matter how many processes append. Index streams share the log's id space; waits block on the
 * store through a per-process `XREAD BLOCK` tailer. Nothing is trimmed or expired.
 *
 * Unlike the field-per-attribute layout §11.2 suggests, the caller's attributes go into one JSON
 * field `e` (the server adds `created_at`, `hlc`, `origin_replica`, `origin_seq` as fields): the
 * functions never look inside them, and reading 100 entries of ~34 small fields cost the client
 * about 4 ms of reply parsing against under 1 ms for the compact form (measured here, ioredis 6).
 *
 * Durability (DECISIONS Q4): an append is acknowledged once Redis executed it; with
 * `appendonly yes` Redis writes the command to the AOF before replying, so a killed Redis
 * process loses no acknowledged event (an OS crash can lose up to the last `everysec` second).
 * The opt-in durable mode must know the write reached the disk: on Redis ≥ 7.2 it waits with
 * `WAITAOF 1 0`; older servers have no such wait, so durable mode there requires
 * `appendfsync always` (every reply follows its fsync) and refuses to open otherwise.
 */
import { createHash, randomBytes } from 'node:crypto';
import { PalaceError, isPalaceError } from '../../core/errors.js';
import type { ArtifactDraft, ArtifactRecord, EventDraft, EventQuery, Logstream, MeshState, RemoteArtifact, RemoteEvent, StoredArtifact, StoredEvent } from '../ports/logstream.js';
import { newStampedId } from '../logstream-ids.js';
import { REDIS_STORE, RedisConnections, guardRedis, redisFailure, type RedisConnectionOptions } from './connection.js';
import { FunctionLibrary } from './functions.js';
import { LOGSTREAM_LIBRARY, LS_APPEND, LS_PUT_ARTIFACT, LS_SUBMIT_PATCH } from './logstream-functions.js';
import { LOGSTREAM_SYNC_LIBRARY, LS_APPLY_ARTIFACT, LS_APPLY_REMOTE, LS_RESERVE_SEQ } from './logstream-sync-functions.js';
import { LogTailer } from './logstream-tailer.js';

const REPLICA_RE = /^rep_(?:[0-9a-f]{32}|[0-9a-f]{12})$/;
const library = new FunctionLibrary(LOGSTREAM_LIBRARY);
const syncLibrary = new FunctionLibrary(LOGSTREAM_SYNC_LIBRARY);

type StreamEntry = [id: string, fields: string[]];
type AppendReply = [1, number, string, string, string?] | [0, 'duplicate_id'] | [0, 'unknown_artifact', number];

/** Fields with an index stream, and the key segment of each (§11.2). */
const INDEXED = [
  ['correlation_id', 'corr'],
  ['to_agent', 'to'],
  ['from_agent', 'from'],
  ['stream', 'stream'],
  ['topic', 'topic'],
  ['type', 'type'],
] as const;

export interface RedisLogstreamOptions extends RedisConnectionOptions {
  /** Wait for the AOF fsync before acknowledging (MEMPALACE_LOGSTREAM_DURABLE). */
  durable?: boolean;
  /** Longest durable wait before the append is reported as a retryable error (default 2 000 ms). */
  durableTimeoutMs?: number;
}

function parseMetadata(text: string | undefined): Record<string, unknown> {
  try {
    const v = JSON.parse(text ?? '{}') as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function fieldMap(fields: string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) map.set(fields[i]!, fields[i + 1]!);
  return map;
}

/** The caller-supplied attributes of an event, stored as one JSON field `e` of its log entry. */
interface EntryBody {
  id: string;
  type: string;
  stream: string;
  room: string;
  topic: string | null;
  from_agent: string;
  to_agent: string | null;
  correlation_id: string | null;
  branch: string | null;
  base_commit: string | null;
  status: string | null;
  body: string;
  /** Canonical JSON text, as validated. */
  metadata: string;
  /** Submission order. */
  artifact_ids: string[];
}

/** A log entry as the stored event of §3.1 (artifact ids ascending, as every read returns them). */
export function entryToEvent(entryId: string, fields: string[]): StoredEvent {
  const f = fieldMap(fields);
  const e = JSON.parse(f.get('e') ?? '{}') as EntryBody;
  return {
    id: e.id,
    seq: Number.parseInt(entryId, 10),
    origin_replica: f.get('origin_replica') ?? '',
    origin_seq: Number(f.get('origin_seq')),
    hlc: f.get('hlc') ?? '',
    type: e.type,
    stream: e.stream,
    room: e.room,
    topic: e.topic,
    from_agent: e.from_agent,
    to_agent: e.to_agent,
    correlation_id: e.correlation_id,
    branch: e.branch,
    base_commit: e.base_commit,
    status: e.status,
    artifact_ids: [...e.artifact_ids].sort(),
    body: e.body,
    created_at: f.get('created_at') ?? '',
    metadata: parseMetadata(e.metadata),
  };
}

/** The complete predicate of an event query (§5.3), applied to every candidate and by the tailer. */
export function eventMatches(e: StoredEvent, q: Omit<EventQuery, 'order' | 'limit'>): boolean {
  for (const field of ['stream', 'room', 'topic', 'type', 'from_agent', 'correlation_id', 'status'] as const) {
    const want = q[field];
    if (want !== undefined && e[field] !== want) return false;
  }
  if (q.to_agent !== undefined && e.to_agent !== q.to_agent && e.to_agent !== '*') return false;
  if (q.afterSeq !== undefined && e.seq <= q.afterSeq) return false;
  if (q.beforeSeq !== undefined && e.seq >= q.beforeSeq) return false;
  if (q.sinceCreatedAt !== undefined && e.created_at < q.sinceCreatedAt) return false;
  return true;
}

/** Ranges one stream in order within an exclusive `seq` window, a chunk at a time. */
class RangeCursor {
  private buffer: StreamEntry[] = [];
  private exhausted = false;

  constructor(
    private readonly store: RedisLogstream,
    private readonly key: string,
    private readonly order: 'asc' | 'desc',
    private low: string,
    private high: string,
    private readonly chunk: number,
  ) {}

  async peek(): Promise<StreamEntry | undefined> {
    if (this.buffer.length === 0 && !this.exhausted) await this.fill();
    return this.buffer[0];
  }

  shift(): StreamEntry | undefined {
    return this.buffer.shift();
  }

  /** The next chunk (for the log itself, read whole chunks at once). */
  async take(): Promise<StreamEntry[]> {
    if (this.buffer.length === 0 && !this.exhausted) await this.fill();
    const out = this.buffer;
    this.buffer = [];
    return out;
  }

  private async fill(): Promise<void> {
    const conn = this.store.connections.command();
    const entries = (this.order === 'asc'
      ? await conn.xrange(this.key, this.low, this.high, 'COUNT', this.chunk)
      : await conn.xrevrange(this.key, this.high, this.low, 'COUNT', this.chunk)) as StreamEntry[];
    if (entries.length < this.chunk) this.exhausted = true;
    const last = entries.at(-1);
    if (last) {
      if (this.order === 'asc') this.low = `(${last[0]}`;
      else this.high = `(${last[0]}`;
    }
    this.buffer = entries;
  }
}

const seqOfEntry = (entry: StreamEntry) => Number.parseInt(entry[0], 10);

export class RedisLogstream implements Logstream {
  readonly storeName = REDIS_STORE;
  readonly connections: RedisConnections;
  private readonly tailer: LogTailer;
  private durableCheckedAt = 0;
  private hasWaitAof = false;

  private constructor(
    private readonly options: RedisLogstreamOptions,
    private readonly replica: string,
    connections: RedisConnections,
  ) {
    this.connections = connections;
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
        throw new PalaceError('internal', `${replicaKey} holds no valid replica id (expected rep_ + 32 or 12 lowercase hex); refusing to mint a second replica id — restore or delete it explicitly`, { store: REDIS_STORE, details: { key: replicaKey } });
      }
      const store = new RedisLogstream(options, replica, connections);
      if (options.durable) await store.ensureDurable(true);
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

  private indexKeysOf(draft: EventDraft): Set<string> {
    const indexKeys = new Set<string>();
    for (const [field, segment] of INDEXED) {
      const value = draft[field];
      if (value !== null) indexKeys.add(this.indexKey(segment, value));
    }
    return indexKeys;
  }

  /** The JSON field `e` of a log entry. */
  private entryJson(eventId: string, draft: EventDraft): string {
    const entry: EntryBody = {
      id: eventId, type: draft.type, stream: draft.stream, room: draft.room, topic: draft.topic, from_agent: draft.from_agent, to_agent: draft.to_agent,
      correlation_id: draft.correlation_id, branch: draft.branch, base_commit: draft.base_commit, status: draft.status,
      body: draft.body, metadata: draft.metadata_json, artifact_ids: draft.artifact_ids,
    };
    return JSON.stringify(entry);
  }

  /** Keys and args of one append (§11.4); `checkArtifacts` false for the event of a patch. */
  private appendCall(eventId: string, draft: EventDraft, checkArtifacts: boolean): { keys: string[]; args: string[] } {
    const indexKeys = this.indexKeysOf(draft);
    const artifactKeys = checkArtifacts ? draft.artifact_ids.map((id) => this.key('art', id)) : [];
    const fields = ['e', this.entryJson(eventId, draft)];
    const keys = [this.key('seq'), this.key('log'), this.bucketKey(eventId), this.key('vv'), this.key('ops', this.replica), this.key('hlc'), ...indexKeys, ...artifactKeys];
    return { keys, args: [eventId, this.replica, String(indexKeys.size), String(artifactKeys.length), ...fields] };
  }

  private storedEvent(id: string, draft: EventDraft, seq: number, createdAt: string, hlc: string): StoredEvent {
    return {
      id, seq, origin_replica: this.replica, origin_seq: seq, hlc,
      type: draft.type, stream: draft.stream, room: draft.room, topic: draft.topic, from_agent: draft.from_agent, to_agent: draft.to_agent,
      correlation_id: draft.correlation_id, branch: draft.branch, base_commit: draft.base_commit, status: draft.status,
      artifact_ids: [...draft.artifact_ids], body: draft.body, created_at: createdAt, metadata: parseMetadata(draft.metadata_json),
    };
  }

  /** A failed write names the id it tried, so a caller can look for it before retrying. */
  private writeFailure(e: unknown, eventId: string): PalaceError {
    // PalaceErrors were raised before anything was sent (or are not about the connection).
    if (isPalaceError(e)) return e;
    const failure = redisFailure(e);
    return new PalaceError('store_unavailable', `${failure.message} (the write may or may not have been applied; event id ${eventId})`, {
      store: REDIS_STORE, retryable: true, cause: e, details: { event_id: eventId },
    });
  }

  async append(draft: EventDraft): Promise<StoredEvent> {
    for (;;) {
      const id = newStampedId('evt', Date.now());
      const { keys, args } = this.appendCall(id, draft, true);
      let reply: AppendReply;
      try {
        if (this.options.durable) await this.ensureDurable(false);
        reply = (await library.call(this.connections.command(), LS_APPEND, keys, args)) as AppendReply;
      } catch (e) {
        throw this.writeFailure(e, id);
      }
      if (reply[0] === 0) {
        if (reply[1] === 'duplicate_id') continue;
        const artifactId = draft.artifact_ids[reply[2] - 1]!;
        throw new PalaceError('not_found', `unknown artifact ${artifactId}`, { field: 'artifact_ids', rule: 'known_artifact', details: { artifact_id: artifactId } });
      }
      await this.afterWrite(id);
      return this.storedEvent(id, draft, Number(reply[1]), reply[2], reply[3]);
    }
  }

  async appendFor(targetId: string, build: (target: StoredEvent) => EventDraft): Promise<StoredEvent | null> {
    // Events are immutable and never deleted, so reading the target first cannot race (§11.4).
    const target = await this.getEvent(targetId);
    if (!target) return null;
    return this.append(build(target));
  }

  private artifactArgs(id: string, draft: ArtifactDraft): string[] {
    return [id, draft.kind, draft.sha256, String(draft.size_bytes), draft.created_by, draft.metadata_json, this.replica, draft.content];
  }

  private artifactRecord(id: string, draft: ArtifactDraft, createdAt: string): ArtifactRecord {
    return { id, kind: draft.kind, sha256: draft.sha256, size_bytes: draft.size_bytes, created_by: draft.created_by, created_at: createdAt, origin_replica: this.replica };
  }

  async putArtifact(draft: ArtifactDraft): Promise<ArtifactRecord> {
    for (;;) {
      const id = newStampedId('art', Date.now());
      let reply: [1, string] | [0, 'duplicate_id'];
      try {
        if (this.options.durable) await this.ensureDurable(false);
        reply = (await library.call(this.connections.command(), LS_PUT_ARTIFACT, [this.key('art', id), this.key('blob', draft.sha256)], this.artifactArgs(id, draft))) as typeof reply;
      } catch (e) {
        throw redisFailure(e);
      }
      if (reply[0] === 0) continue;
      await this.afterWrite(id);
      return this.artifactRecord(id, draft, reply[1]);
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
        if (this.options.durable) await this.ensureDurable(false);
        reply = (await library.call(this.connections.command(), LS_SUBMIT_PATCH,
          [this.key('art', artifactId), this.key('blob', artifact.sha256), ...append.keys],
          [...this.artifactArgs(artifactId, artifact), ...append.args])) as AppendReply;
      } catch (e) {
        throw this.writeFailure(e, eventId);
      }
      if (reply[0] === 0) continue;
      await this.afterWrite(eventId);
      return { artifact: this.artifactRecord(artifactId, artifact, reply[4]!), event: this.storedEvent(eventId, draft, Number(reply[1]), reply[2], reply[3]) };
    }
  }

  async getArtifact(id: string): Promise<StoredArtifact | null> {
    return guardRedis(async () => {
      const conn = this.connections.command();
      const h = await conn.hgetall(this.key('art', id));
      if (!h.id) return null;
      const content = await conn.get(this.key('blob', h.sha256!));
      if (content === null) throw new PalaceError('internal', `artifact ${id} has no stored content (blob ${h.sha256} is missing)`, { store: REDIS_STORE, details: { id } });
      return {
        id: h.id, kind: h.kind!, sha256: h.sha256!, size_bytes: Number(h.size_bytes), content,
        created_by: h.created_by!, created_at: h.created_at!, origin_replica: h.origin_replica || null, metadata: parseMetadata(h.metadata),
      };
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

  /** §11.5: drive by the shortest applicable index (or the log), filter with the full predicate. */
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
      const cursor = new RangeCursor(this, this.key('log'), q.order, low, high, postFiltered ? chunk : q.limit);
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
    const cursors = best!.map((k) => new RangeCursor(this, k, q.order, low, high, chunk));
    const before = (a: number, b: number) => (q.order === 'asc' ? a < b : a > b);
    for (;;) {
      const seqs: number[] = [];
      while (seqs.length < chunk) {
        let pick: RangeCursor | undefined;
        let pickSeq = 0;
        for (const c of cursors) {
          const head = await c.peek();
          if (head && (!pick || before(seqOfEntry(head), pickSeq))) {
            pick = c;
            pickSeq = seqOfEntry(head);
          }
        }
        if (!pick) break;
        pick.shift();
        seqs.push(pickSeq);
      }
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
    try {
      for (let attempt = 0; ; attempt++) {
        const events = await this.list({ ...query, order: 'asc' });
        const remaining = deadline - Date.now();
        if (events.length > 0 || remaining <= 0 || signal?.aborted) return events;
        await subscription.next(remaining, attempt, signal);
      }
    } finally {
      subscription.close();
    }
  }

  async versionVector(): Promise<Record<string, number>> {
    return guardRedis(async () => {
      const raw = await this.connections.command().hgetall(this.key('vv'));
      return Object.fromEntries(Object.entries(raw).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => [k, Number(v)]));
    });
  }

  async opsAfter(origin: string, afterOriginSeq: number, limit: number): Promise<StoredEvent[]> {
    return guardRedis(async () => {
      const conn = this.connections.command();
      const seqs = await conn.zrangebyscore(this.key('ops', origin), `(${afterOriginSeq}`, '+inf', 'LIMIT', 0, limit);
      const entries = await pipelined<StreamEntry[]>(conn, seqs.map((s) => ['xrange', this.key('log'), `${s}-0`, `${s}-0`]));
      return entries.flatMap(([entry]) => (entry ? [entryToEvent(entry[0], entry[1])] : []));
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

  async applyRemoteArtifact(a: RemoteArtifact): Promise<boolean> {
    const args = [a.id, a.kind, a.sha256, String(a.size_bytes), a.created_by, a.metadata_json, a.origin_replica ?? '', a.content, a.created_at];
    let reply: number;
    try {
      if (this.options.durable) await this.ensureDurable(false);
      reply = Number(await syncLibrary.call(this.connections.command(), LS_APPLY_ARTIFACT, [this.key('art', a.id), this.key('blob', a.sha256)], args));
    } catch (e) {
      throw redisFailure(e);
    }
    if (reply === 1) await this.afterWrite(a.id);
    return reply === 1;
  }

  async reserveOwnSeqAbove(originSeq: number): Promise<boolean> {
    return guardRedis(async () => Number(await syncLibrary.call(this.connections.command(), LS_RESERVE_SEQ, [this.key('seq')], [String(originSeq)])) === 1);
  }

  async applyRemoteEvent(e: RemoteEvent, options: { reclaimOwn?: boolean } = {}): Promise<'applied' | 'own_origin' | 'duplicate'> {
    if (e.origin_replica === this.replica && !options.reclaimOwn) return 'own_origin';
    const indexKeys = this.indexKeysOf(e);
    const artifactKeys = e.artifact_ids.map((id) => this.key('art', id));
    const keys = [this.key('seq'), this.key('log'), this.bucketKey(e.id), this.key('vv'), this.key('ops', e.origin_replica), this.key('hlc'), ...indexKeys, ...artifactKeys];
    const args = [e.id, e.origin_replica, String(indexKeys.size), String(artifactKeys.length), String(e.origin_seq), e.hlc, e.created_at, this.entryJson(e.id, e)];
    let reply: [1, number] | [0, 'duplicate'] | [0, 'unknown_artifact', number];
    try {
      if (this.options.durable) await this.ensureDurable(false);
      reply = (await syncLibrary.call(this.connections.command(), LS_APPLY_REMOTE, keys, args)) as typeof reply;
    } catch (err) {
      throw this.writeFailure(err, e.id);
    }
    if (reply[0] === 0) {
      if (reply[1] === 'duplicate') return 'duplicate';
      const artifactId = e.artifact_ids[reply[2] - 1]!;
      throw new PalaceError('not_found', `unknown artifact ${artifactId}`, { field: 'artifact_ids', rule: 'known_artifact', details: { artifact_id: artifactId } });
    }
    await this.afterWrite(e.id);
    return 'applied';
  }

  async readMeshState(): Promise<MeshState> {
    return guardRedis(async () => {
      const conn = this.connections.command();
      const [peers, profiles, publishedAt] = await Promise.all([conn.hgetall(this.key('estate', 'peers')), conn.hgetall(this.key('estate', 'profiles')), conn.hget(this.key('estate', 'meta'), 'published_at')]);
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

  /**
   * Durable mode before a write: on servers without WAITAOF, re-confirm every few seconds that
   * `appendfsync always` is still in force (an operator may have changed it at run time).
   */
  private async ensureDurable(force: boolean): Promise<void> {
    if (this.hasWaitAof || (!force && Date.now() - this.durableCheckedAt < 5_000)) return;
    const conn = this.connections.command();
    const version = parseVersion(await infoField(conn, 'server', 'redis_version'));
    if (version >= 7_002_000) {
      this.hasWaitAof = true;
      return;
    }
    let fsync: string | undefined;
    try {
      fsync = ((await conn.call('CONFIG', 'GET', 'appendfsync')) as string[])[1];
    } catch (e) {
      throw durableRefusal(`CONFIG GET appendfsync failed (${(e as Error).message})`);
    }
    if (fsync !== 'always') throw durableRefusal(`appendfsync is ${fsync ?? 'unknown'}`);
    this.durableCheckedAt = Date.now();
  }

  /** Durable mode after a write: WAITAOF where the server has it (Redis ≥ 7.2). */
  private async afterWrite(id: string): Promise<void> {
    if (!this.options.durable || !this.hasWaitAof) return;
    const timeout = this.options.durableTimeoutMs ?? 2_000;
    let synced: number;
    try {
      synced = ((await this.connections.command().call('WAITAOF', '1', '0', String(timeout))) as number[])[0] ?? 0;
    } catch (e) {
      throw this.writeFailure(e, id);
    }
    if (synced < 1) {
      throw new PalaceError('store_unavailable', `redis is unavailable: ${id} was stored but its AOF fsync was not confirmed within ${timeout} ms; check for ${id} before retrying`, {
        store: REDIS_STORE, retryable: true, details: { event_id: id, rule: 'durable_fsync' },
      });
    }
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

function durableRefusal(reason: string): PalaceError {
  return new PalaceError('store_unavailable', `redis cannot confirm durable appends: ${reason}. MEMPALACE_LOGSTREAM_DURABLE=1 needs Redis ≥ 7.2 (WAITAOF) or, on older servers, appendonly yes with appendfsync always`, {
    store: REDIS_STORE, retryable: false, rule: 'durable_fsync',
  });
}

function parseVersion(text: string | undefined): number {
  const [major = 0, minor = 0, patch = 0] = (text ?? '').split('.').map((p) => Number.parseInt(p, 10) || 0);
  return major * 1_000_000 + minor * 1_000 + patch;
}

async function infoField(conn: ReturnType<RedisConnections['command']>, section: string, field: string): Promise<string | undefined> {
  const info = await conn.info(section);
  return new RegExp(`^${field}:(.*)$`, 'm').exec(info)?.[1]?.trim();
}

/**
 * The operating requirements of §11.10–11.12 that make "nothing trimmed silently" and the AOF
 * durability promise true: AOF on, `noeviction`, and Functions (Redis ≥ 7.0).
 */
async function checkServer(conn: ReturnType<RedisConnections['command']>): Promise<void> {
  const version = await infoField(conn, 'server', 'redis_version');
  if (parseVersion(version) < 7_000_000) {
    throw new PalaceError('store_unavailable', `redis ${version ?? '?'} is too old for the logstream: Redis Functions need 7.0 or later`, { store: REDIS_STORE, retryable: false, rule: 'redis_version' });
  }
  const aof = await infoField(conn, 'persistence', 'aof_enabled');
  if (aof !== '1') {
    throw new PalaceError('store_unavailable', 'redis runs without AOF (appendonly no); the logstream requires appendonly yes so acknowledged events survive a restart', { store: REDIS_STORE, retryable: false, rule: 'redis_appendonly' });
  }
  const policy = await infoField(conn, 'memory', 'maxmemory_policy');
  if (policy !== 'noeviction') {
    throw new PalaceError('store_unavailable', `redis maxmemory-policy is ${policy ?? 'unknown'}; the logstream requires noeviction, since any eviction could drop events silently`, { store: REDIS_STORE, retryable: false, rule: 'redis_noeviction' });
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
