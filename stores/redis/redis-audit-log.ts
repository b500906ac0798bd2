/**
 * The cluster profile's audit log on Redis: a Stream `mempalace:{<palace>}:audit` whose entry ids
 * are `<seq>-0`, the chain's head in `…:audit:head` and the retention anchor in `…:audit:anchor`.
 * Redis rather than OpenSearch because the chain needs one total order and an atomic
 * compare-and-append from every serve process: a Redis function runs alone on the server, where
 * OpenSearch has neither multi-document transactions nor read-your-write without a refresh. An
 * append computes the hash from the head it read and the function appends only if the head is
 * still that one; otherwise the writer reads the new head and tries again.
 */
import { GENESIS_HASH, canonicalJson, chainHash } from '../../core/audit-chain.js';
import { PalaceError } from '../../core/errors.js';
import type { AuditAnchor, AuditDraft, AuditLog, AuditRecord } from '../ports/audit-log.js';
import type { RedisConnections } from './connection.js';
import { guardRedis, type RedisConnectionOptions } from './connection.js';
import { FunctionLibrary, connectWithLibrary } from './functions.js';
import { RedisLibraryStore } from './library-store.js';

const VERSION = 'v1';
const APPEND = `audit_append_${VERSION}`;
const PRUNE = `audit_prune_${VERSION}`;
// keys: stream, head, anchor. args: expected head seq, new seq, new hash, record JSON, at.
// Returns 1 when appended, 0 when the head moved meanwhile.
const library = new FunctionLibrary(`#!lua name=mempalace_audit_${VERSION}
local function head_seq(keys)
  local h = redis.call('HGET', keys[2], 'seq')
  if h then return tonumber(h) end
  local a = redis.call('HGET', keys[3], 'seq')
  if a then return tonumber(a) end
  return 0
end
redis.register_function('${APPEND}', function(keys, args)
  if head_seq(keys) ~= tonumber(args[1]) then return 0 end
  redis.call('XADD', keys[1], args[2] .. '-0', 'record', args[4], 'at', args[5])
  redis.call('HSET', keys[2], 'seq', args[2], 'hash', args[3])
  return 1
end)
-- keys: stream, anchor. args: anchor seq, anchor hash.
redis.register_function('${PRUNE}', function(keys, args)
  local a = redis.call('HGET', keys[2], 'seq')
  if a and tonumber(a) >= tonumber(args[1]) then return 0 end
  redis.call('HSET', keys[2], 'seq', args[1], 'hash', args[2])
  return redis.call('XTRIM', keys[1], 'MINID', (tonumber(args[1]) + 1) .. '-0')
end)
`);

/** Attempts of one append before it fails as retryable (each lost race means another writer appended). */
const MAX_ATTEMPTS = 200;

type StreamEntry = [string, string[]];

function recordOf(entry: StreamEntry): AuditRecord {
  const fields = entry[1];
  return JSON.parse(fields[fields.indexOf('record') + 1]!) as AuditRecord;
}

export class RedisAuditLog extends RedisLibraryStore implements AuditLog {
  private constructor(connections: RedisConnections) {
    super(connections);
  }

  static async open(options: RedisConnectionOptions): Promise<RedisAuditLog> {
    return connectWithLibrary(options, library, (connections) => new RedisAuditLog(connections));
  }

  private keys(): [string, string, string] {
    return [this.connections.key('audit'), this.connections.key('audit', 'head'), this.connections.key('audit', 'anchor')];
  }

  private async hashPair(key: string): Promise<AuditAnchor | undefined> {
    const h = await guardRedis(() => this.conn.hgetall(key));
    return h.seq === undefined ? undefined : { seq: Number(h.seq), hash: h.hash! };
  }

  async head(): Promise<AuditAnchor> {
    const [, head] = this.keys();
    return (await this.hashPair(head)) ?? this.anchor();
  }

  async anchor(): Promise<AuditAnchor> {
    const [, , anchor] = this.keys();
    return (await this.hashPair(anchor)) ?? { seq: 0, hash: GENESIS_HASH };
  }

  private async appendAfter(expected: AuditAnchor, record: AuditRecord): Promise<boolean> {
    const done = await guardRedis(() =>
      library.call(this.conn, APPEND, this.keys(), [expected.seq, record.seq, record.hash, canonicalJson(record), record.at])
    );
    return done === 1;
  }

  async append(draft: AuditDraft): Promise<AuditRecord> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const head = await this.head();
      const body = { ...draft, seq: head.seq + 1, prev_hash: head.hash };
      const record: AuditRecord = { ...body, hash: chainHash(head.hash, body) };
      if (await this.appendAfter(head, record)) return record;
      await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, attempt + 1)));
    }
    throw new PalaceError('store_unavailable', `redis: the audit append lost ${MAX_ATTEMPTS} races to other writers`, { store: 'redis', retryable: true });
  }

  async scan(afterSeq: number, limit: number): Promise<AuditRecord[]> {
    const [stream] = this.keys();
    const entries = await guardRedis(() => this.conn.xrange(stream, `${afterSeq + 1}-0`, '+', 'COUNT', limit)) as StreamEntry[];
    return entries.map(recordOf);
  }

  async prune(before: string): Promise<number> {
    let last: AuditRecord | undefined;
    for (let after = (await this.anchor()).seq;;) {
      const page = await this.scan(after, 500);
      const older = page.filter((r, i) => r.at < before && page.slice(0, i).every((p) => p.at < before));
      if (older.length > 0) last = older[older.length - 1];
      if (older.length < page.length || page.length < 500) break;
      after = page[page.length - 1]!.seq;
    }
    if (!last) return 0;
    const [stream, , anchor] = this.keys();
    return Number(await guardRedis(() => library.call(this.conn, PRUNE, [stream, anchor], [last.seq, last.hash])));
  }

  async restore(records: AuditRecord[], anchor: AuditAnchor): Promise<number> {
    const [stream, , anchorKey] = this.keys();
    const empty = (await guardRedis(() => this.conn.xlen(stream))) === 0;
    if (empty && (await this.anchor()).seq === 0 && anchor.seq > 0) {
      await guardRedis(() => this.conn.hset(anchorKey, 'seq', anchor.seq, 'hash', anchor.hash));
    }
    let written = 0;
    for (const r of [...records].sort((a, b) => a.seq - b.seq)) {
      const head = await this.head();
      if (r.seq <= head.seq) continue;
      if (await this.appendAfter(head, r)) written++;
    }
    return written;
  }
}

export function openRedisAuditLog(options: RedisConnectionOptions): Promise<RedisAuditLog> {
  return RedisAuditLog.open(options);
}
