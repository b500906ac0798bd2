/**
 * The replication writes of the logstream (docs/logstream.md §11.4 `ls_apply_remote`) as their own
 * Redis Functions library, versioned apart from the append library so either can change alone.
 * Like the append path, every check comes before `INCR seq`, so `seq` stays gap-free.
 *
 * Apply-event keys (in this order): seq, log, id bucket, version vector, ops of the event's
 * origin, hlc state, then `n_index` index streams, then `n_artifacts` artifact hashes to check.
 * Args: event id, origin replica, n_index, n_artifacts, origin_seq, hlc, created_at, entry JSON,
 * the origin's signature ('' for none), prev_origin_seq ('' for no chain check), '1' to reclaim
 * own events (events above may be held). With a chain link, the highest origin_seq held below
 * the event's must equal it and (unless reclaiming) none may be held above (issue 24, M1).
 * Replies: `{1, seq}`, `{0, 'duplicate'}`, `{0, 'gap'}`, `{0, 'unsafe_seq'}` or `{0, 'unknown_artifact', i}`.
 *
 * Apply-artifact keys: artifact hash, blob. Args: id, kind, sha256, size_bytes, created_by,
 * metadata, origin_replica, content, created_at, signature. Replies 1 (stored) or 0 (id already held).
 *
 * Reserve keys: seq. Args: the origin_seq peers proved they hold for this replica (docs/logstream.md §10.7). Moves
 * `seq` (and so every later own `origin_seq`) up to it; the one gap in `seq` a restore costs.
 * Replies 1, 0, or -1 when the number leaves no exact seq above it (2^53 − 1).
 */
import { LUA_TIME_HELPERS } from '../functions.js';
import { LUA_HLC_STATE } from './functions.js';

export const LS_SYNC_VERSION = 'v2';
export const LS_APPLY_REMOTE = `ls_apply_remote_${LS_SYNC_VERSION}`;
export const LS_APPLY_ARTIFACT = `ls_apply_artifact_${LS_SYNC_VERSION}`;
export const LS_RESERVE_SEQ = `ls_reserve_seq_${LS_SYNC_VERSION}`;

export const LOGSTREAM_SYNC_LIBRARY = `#!lua name=mempalace_logstream_sync_${LS_SYNC_VERSION}
${LUA_TIME_HELPERS}
${LUA_HLC_STATE}
local MAX_SEQ = 9007199254740991

-- Observe a remote hlc (docs/logstream.md §2): adopt it when greater, unless it is > 60 s ahead.
local function hlc_observe(key, remote, now)
  local a, b = string.match(remote, '^(%d+)%-(%x+)%-')
  if not a then return end
  local rms, rc = tonumber(a), tonumber(b, 16)
  if rms > now + 60000 then return end
  local ms, counter = hlc_state(key)
  if rms > ms or (rms == ms and rc > counter) then
    redis.call('SET', key, string.format('%d %d', rms, rc))
  end
end

redis.register_function('${LS_APPLY_REMOTE}', function(k, a)
  if redis.call('HEXISTS', k[3], a[1]) == 1 then return {0, 'duplicate'} end
  if redis.call('ZCOUNT', k[5], a[5], a[5]) > 0 then return {0, 'duplicate'} end
  if a[10] ~= '' then
    local below = redis.call('ZREVRANGEBYSCORE', k[5], '(' .. a[5], '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
    local held = below[2] or '0'
    if held ~= a[10] then return {0, 'gap'} end
    if a[11] ~= '1' and redis.call('ZCOUNT', k[5], '(' .. a[5], '+inf') > 0 then return {0, 'gap'} end
  end
  if tonumber(redis.call('GET', k[1]) or '0') >= MAX_SEQ then return {0, 'unsafe_seq'} end
  local n_index, n_art = tonumber(a[3]), tonumber(a[4])
  for i = 1, n_art do
    if redis.call('EXISTS', k[6 + n_index + i]) == 0 then return {0, 'unknown_artifact', i} end
  end
  local seq = redis.call('INCR', k[1])
  local entry_id = string.format('%d-0', seq)
  redis.call('XADD', k[2], entry_id, 'e', a[8], 'created_at', a[7], 'hlc', a[6], 'origin_replica', a[2], 'origin_seq', a[5], 'sig', a[9], 'prev', a[10])
  for i = 1, n_index do redis.call('XADD', k[6 + i], entry_id, 'i', a[1]) end
  redis.call('HSET', k[3], a[1], seq)
  local top = tonumber(redis.call('HGET', k[4], a[2]) or '0')
  if tonumber(a[5]) > top then redis.call('HSET', k[4], a[2], a[5]) end
  redis.call('ZADD', k[5], a[5], seq)
  hlc_observe(k[6], a[6], now_ms())
  return {1, seq}
end)

redis.register_function('${LS_APPLY_ARTIFACT}', function(k, a)
  if redis.call('EXISTS', k[1]) == 1 then return 0 end
  redis.call('SET', k[2], a[8], 'NX')
  redis.call('HSET', k[1], 'id', a[1], 'kind', a[2], 'sha256', a[3], 'size_bytes', a[4], 'created_by', a[5], 'created_at', a[9], 'metadata', a[6], 'origin_replica', a[7], 'sig', a[10])
  return 1
end)

redis.register_function('${LS_RESERVE_SEQ}', function(k, a)
  local cur = tonumber(redis.call('GET', k[1]) or '0')
  if tonumber(a[1]) >= MAX_SEQ then return -1 end
  if tonumber(a[1]) <= cur then return 0 end
  redis.call('SET', k[1], a[1])
  return 1
end)
`;
