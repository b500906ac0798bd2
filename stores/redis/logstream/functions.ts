/**
 * The logstream's write path as one Redis Functions library (docs/logstream.md §11.4). Validation
 * ran in TypeScript already; these functions do only what must be atomic. Every check comes
 * before `INCR seq`, and nothing after it can fail short of a broken keyspace, so `seq` stays
 * gap-free and is the commit order across every API process.
 *
 * Append keys (in this order): seq, log, id bucket, version vector, ops of self, hlc state, then
 * `n_index` index streams, then `n_artifacts` artifact hashes to check.
 * Append args: event id, replica id, n_index, n_artifacts, then field/value pairs of the entry.
 * Replies: `{1, seq, created_at, hlc}`, `{0, 'duplicate_id'}`, `{0, 'unknown_artifact', i}` or
 * `{0, 'unsafe_seq'}` when the next seq would pass 2^53 − 1 (it would no longer be exact).
 */
import { LUA_TIME_HELPERS } from '../functions.js';

/** The hybrid logical clock state '<ms> <counter>' kept in one key, read by both logstream libraries. */
export const LUA_HLC_STATE = `
local function hlc_state(key)
  local state = redis.call('GET', key)
  if state then
    local ms, counter = string.match(state, '^(%d+) (%d+)$')
    if ms then return tonumber(ms), tonumber(counter) end
  end
  return 0, 0
end
`;

export const LS_VERSION = 'v2';
export const LS_APPEND = `ls_append_${LS_VERSION}`;
export const LS_PUT_ARTIFACT = `ls_put_artifact_${LS_VERSION}`;
export const LS_SUBMIT_PATCH = `ls_submit_patch_${LS_VERSION}`;

export const LOGSTREAM_LIBRARY = `#!lua name=mempalace_logstream_${LS_VERSION}
${LUA_TIME_HELPERS}

${LUA_HLC_STATE}
-- Hybrid logical clock tick (docs/logstream.md §2).
local function hlc_tick(key, now)
  local ms, counter = hlc_state(key)
  if now > ms then
    ms, counter = now, 0
  elseif counter < 16777215 then
    counter = counter + 1
  else
    ms, counter = ms + 1, 0
  end
  redis.call('SET', key, string.format('%d %d', ms, counter))
  return ms, counter
end

local function append_check(k, a, check_artifacts)
  if redis.call('HEXISTS', k[3], a[1]) == 1 then return {0, 'duplicate_id'} end
  if tonumber(redis.call('GET', k[1]) or '0') >= 9007199254740991 then return {0, 'unsafe_seq'} end
  if check_artifacts then
    local n_index, n_art = tonumber(a[3]), tonumber(a[4])
    for i = 1, n_art do
      if redis.call('EXISTS', k[6 + n_index + i]) == 0 then return {0, 'unknown_artifact', i} end
    end
  end
  return nil
end

local function append_write(k, a, now)
  local ms, counter = hlc_tick(k[6], now)
  local hlc = string.format('%013d-%06x-%s', ms, counter, a[2])
  local created_at = utc_second(now)
  local seq = redis.call('INCR', k[1])
  local entry_id = string.format('%d-0', seq)
  local fields = {}
  for i = 5, #a do fields[#fields + 1] = a[i] end
  local extra = {'created_at', created_at, 'hlc', hlc, 'origin_replica', a[2], 'origin_seq', string.format('%d', seq)}
  for i = 1, #extra do fields[#fields + 1] = extra[i] end
  redis.call('XADD', k[2], entry_id, unpack(fields))
  for i = 1, tonumber(a[3]) do redis.call('XADD', k[6 + i], entry_id, 'i', a[1]) end
  redis.call('HSET', k[3], a[1], seq)
  redis.call('HSET', k[4], a[2], seq)
  redis.call('ZADD', k[5], seq, seq)
  -- As text: as an integer reply, 2^53 − 1 reached the client as 2^53 (measured), a seq must stay exact.
  return {1, string.format('%d', seq), created_at, hlc}
end

-- Artifact args: id, kind, sha256, size_bytes, created_by, metadata, origin_replica, content.
local function artifact_write(k_art, k_blob, a, now)
  local created_at = utc_second(now)
  redis.call('SET', k_blob, a[8], 'NX')
  redis.call('HSET', k_art, 'id', a[1], 'kind', a[2], 'sha256', a[3], 'size_bytes', a[4], 'created_by', a[5], 'created_at', created_at, 'metadata', a[6], 'origin_replica', a[7])
  return created_at
end

local function sub(t, from)
  local out = {}
  for i = from, #t do out[#out + 1] = t[i] end
  return out
end

redis.register_function('${LS_APPEND}', function(keys, args)
  local refused = append_check(keys, args, true)
  if refused then return refused end
  return append_write(keys, args, now_ms())
end)

redis.register_function('${LS_PUT_ARTIFACT}', function(keys, args)
  if redis.call('EXISTS', keys[1]) == 1 then return {0, 'duplicate_id'} end
  return {1, artifact_write(keys[1], keys[2], args, now_ms())}
end)

-- Keys: artifact hash, blob, then the append keys (no artifact keys: the event cites only the
-- new artifact). Args: the 8 artifact args, then the append args.
redis.register_function('${LS_SUBMIT_PATCH}', function(keys, args)
  if redis.call('EXISTS', keys[1]) == 1 then return {0, 'duplicate_id'} end
  local k, a = sub(keys, 3), sub(args, 9)
  local refused = append_check(k, a, false)
  if refused then return refused end
  local now = now_ms()
  local art_created = artifact_write(keys[1], keys[2], args, now)
  local r = append_write(k, a, now)
  r[#r + 1] = art_created
  return r
end)
`;
