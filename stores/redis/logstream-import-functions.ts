/**
 * Storing events and artifacts made elsewhere (restore from an export, migration, replication:
 * logstream.md §8.4) as a Redis Functions library of its own, next to the append library of
 * logstream-functions.ts, whose keys it writes the same way.
 *
 * Import-event keys (in this order): seq, log, id bucket, version vector, ops of the event's
 * origin, hlc state, then `n_index` index streams, then `n_artifacts` artifact hashes to check.
 * Args: event id, origin replica, origin seq, created_at, hlc, n_index, n_artifacts, then the
 * field/value pairs of the entry. Replies: `{1, seq}`, `{0, 'held'}` or `{0, 'unknown_artifact', i}`.
 *
 * Import-artifact keys: artifact hash, blob. Args: id, kind, sha256, size_bytes, created_by,
 * metadata, origin_replica, content, created_at. Replies `1` (stored) or `0` (id already held).
 */
import { LUA_TIME_HELPERS } from './functions.js';

export const LS_IMPORT_VERSION = 'v1';
export const LS_IMPORT_EVENT = `ls_import_event_${LS_IMPORT_VERSION}`;
export const LS_IMPORT_ARTIFACT = `ls_import_artifact_${LS_IMPORT_VERSION}`;

export const LOGSTREAM_IMPORT_LIBRARY = `#!lua name=mempalace_logstream_import_${LS_IMPORT_VERSION}
${LUA_TIME_HELPERS}
-- The clock observes a stamp (logstream.md §2): the greater (ms, counter) wins; stamps more
-- than 60 s ahead of the server's time are ignored.
local function hlc_observe(key, hlc)
  local ms, counter = string.match(hlc, '^(%d+)-(%x+)-')
  if not ms then return end
  ms, counter = tonumber(ms), tonumber(counter, 16)
  if ms > now_ms() + 60000 then return end
  local state = redis.call('GET', key)
  if state then
    local a, b = string.match(state, '^(%d+) (%d+)$')
    if a then
      a, b = tonumber(a), tonumber(b)
      if a > ms or (a == ms and b >= counter) then return end
    end
  end
  redis.call('SET', key, string.format('%d %d', ms, counter))
end

redis.register_function('${LS_IMPORT_EVENT}', function(k, a)
  local origin_seq = tonumber(a[3])
  if redis.call('HEXISTS', k[3], a[1]) == 1 then return {0, 'held'} end
  if #redis.call('ZRANGEBYSCORE', k[5], origin_seq, origin_seq, 'LIMIT', 0, 1) > 0 then return {0, 'held'} end
  local n_index, n_art = tonumber(a[6]), tonumber(a[7])
  for i = 1, n_art do
    if redis.call('EXISTS', k[6 + n_index + i]) == 0 then return {0, 'unknown_artifact', i} end
  end
  local seq = redis.call('INCR', k[1])
  local entry_id = string.format('%d-0', seq)
  local fields = {}
  for i = 8, #a do fields[#fields + 1] = a[i] end
  local extra = {'created_at', a[4], 'hlc', a[5], 'origin_replica', a[2], 'origin_seq', a[3]}
  for i = 1, #extra do fields[#fields + 1] = extra[i] end
  redis.call('XADD', k[2], entry_id, unpack(fields))
  for i = 1, n_index do redis.call('XADD', k[6 + i], entry_id, 'i', a[1]) end
  redis.call('HSET', k[3], a[1], seq)
  local top = tonumber(redis.call('HGET', k[4], a[2]) or '0')
  if origin_seq > top then redis.call('HSET', k[4], a[2], a[3]) end
  redis.call('ZADD', k[5], origin_seq, seq)
  hlc_observe(k[6], a[5])
  return {1, seq}
end)

redis.register_function('${LS_IMPORT_ARTIFACT}', function(k, a)
  if redis.call('EXISTS', k[1]) == 1 then return 0 end
  redis.call('SET', k[2], a[8], 'NX')
  redis.call('HSET', k[1], 'id', a[1], 'kind', a[2], 'sha256', a[3], 'size_bytes', a[4], 'created_by', a[5], 'created_at', a[9], 'metadata', a[6], 'origin_replica', a[7])
  return 1
end)
`;
