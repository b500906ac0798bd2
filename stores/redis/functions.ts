/**
 * Redis Functions libraries (Redis ≥ 7.0). Each library's name and its functions' names carry a
 * version suffix, so two releases running side by side during a deploy never replace each
 * other's code; `FUNCTION LOAD REPLACE` makes loading idempotent. Functions are persisted by
 * Redis (AOF/RDB), but a server restored from an older file may lack them, so a call that finds
 * its function missing loads the library once and retries.
 */
import type { Redis } from 'ioredis';
import { RedisConnections, guardRedis, type RedisConnectionOptions } from './connection.js';

export class FunctionLibrary {
  private loaded: Promise<void> | null = null;

  /** `code` must start with `#!lua name=<library>`. */
  constructor(readonly code: string) {}

  load(conn: Redis): Promise<void> {
    if (!this.loaded) {
      this.loaded = conn.call('FUNCTION', 'LOAD', 'REPLACE', this.code).then(() => undefined);
      this.loaded.catch(() => (this.loaded = null));
    }
    return this.loaded;
  }

  /** `FCALL name numkeys keys... args...`. */
  async call(conn: Redis, name: string, keys: string[], args: (string | number)[]): Promise<unknown> {
    await this.load(conn);
    try {
      return await conn.fcall(name, keys.length, ...keys, ...args);
    } catch (e) {
      if (!/function not found/i.test((e as Error).message)) throw e;
      this.loaded = null;
      await this.load(conn);
      return conn.fcall(name, keys.length, ...keys, ...args);
    }
  }
}

/** Lua helpers shared by the libraries: server time and `YYYY-MM-DDTHH:MM:SSZ` formatting. */
/**
 * New connections with `library` loaded, handed to `make`; closed again if the load fails, so a
 * store that cannot open leaves no connection behind.
 */
export async function connectWithLibrary<T>(options: RedisConnectionOptions, library: FunctionLibrary, make: (connections: RedisConnections) => T): Promise<T> {
  const connections = new RedisConnections(options);
  try {
    await guardRedis(() => library.load(connections.command()));
    return make(connections);
  } catch (e) {
    await connections.close();
    throw e;
  }
}

export const LUA_TIME_HELPERS = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Days since 1970-01-01 to a proleptic Gregorian (year, month, day).
local function civil_from_days(z)
  z = z + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  return y, m, d
end

local function utc_second(ms)
  local secs = math.floor(ms / 1000)
  local days = math.floor(secs / 86400)
  local rem = secs - days * 86400
  local y, m, d = civil_from_days(days)
  return string.format('%04d-%02d-%02dT%02d:%02d:%02dZ', y, m, d, math.floor(rem / 3600), math.floor((rem % 3600) / 60), rem % 60)
end
`;
