import { describe, expect, it } from 'vitest';
import type { Config } from '../../core/config.js';
import { isTruthy } from '../../core/config.js';
import { loadConfig } from '../../app/config.js';
import { thrownBy } from '../helpers/errors.js';

describe('config', () => {
  it('defaults to the embedded profile', () => {
    const c = loadConfig({ HOME: '/tmp/h' });
    expect(c.profile).toBe('embedded');
    expect(c.mcp.jobWaitSeconds).toBe(25);
    expect(c.logstream.sseMaxClients).toBe(8);
    expect(c.opensearch).toMatchObject({ shards: 1, replicas: 0 });
  });
  it('reads the cluster settings and truthy flags', () => {
    const c = loadConfig({ MEMPALACE_PROFILE: 'cluster', REDIS_URL: 'redis://127.0.0.1:6390', MEMPALACE_MCP_READ_ONLY: ' Yes ',
      MEMPALACE_ALLOWED_ROOTS: '/a:/b' });
    expect(c.profile).toBe('cluster');
    expect(c.redis.url).toBe('redis://127.0.0.1:6390');
    expect(c.mcp.readOnly).toBe(true);
    expect(c.allowedRoots).toEqual(['/a', '/b']);
    expect(c.logstream.sseMaxClients).toBe(256);
  });
  it('rejects an unknown profile', () => {
    expect(() => loadConfig({ MEMPALACE_PROFILE: 'cloud' })).toThrow();
  });
  it('treats only 1/true/yes/on as truthy', () => {
    expect(['1', 'TRUE', ' on '].every(isTruthy)).toBe(true);
    expect(['0', 'no', '', undefined].some(isTruthy)).toBe(false);
  });
});

describe('config validation', () => {
  it.each([
    ['MEMPALACE_PROFILE', 'cloud', 'one_of'],
    ['LOG_LEVEL', 'loud', 'one_of'],
    ['LOG_FORMAT', 'xml', 'one_of'],
    ['MEMPALACE_GIT_TIMEOUT_S', '0', 'positive_integer'],
    ['MEMPALACE_GIT_MAX_MB', 'lots', 'positive_integer'],
    ['MEMPALACE_MCP_JOB_WAIT_S', '-1', 'non_negative_integer'],
    ['MEMPALACE_MCP_IDLE_HOURS', 'eight', 'non_negative_number'],
    ['MEMPALACE_MCP_WRITE_STALL_WARN_SECS', '-5', 'non_negative_number'],
    ['MEMPALACE_MCP_WRITE_STALL_EXIT_SECS', '1m', 'non_negative_number'],
    ['MEMPALACE_MAX_RESPONSE_CHARS', '1.5', 'non_negative_integer'],
    ['MEMPALACE_API_RATE_PER_S', 'bogus', 'positive_integer'],
    ['MEMPALACE_API_RATE_BURST', '0', 'positive_integer'],
    ['MEMPALACE_REFRESH_DEBOUNCE_MS', 'soon', 'non_negative_integer'],
    ['MEMPALACE_NOTIFY_ATTEMPTS', '0', 'positive_integer'],
    ['MEMPALACE_NOTIFY_BACKOFF_MS', '2s', 'positive_integer'],
    ['MEMPALACE_JOB_LEASE_MS', '500', 'minimum'],
    ['MEMPALACE_JOB_LEASE_MS', 'long', 'non_negative_integer'],
    ['MEMPALACE_MINE_PARALLEL_BATCHES', 'many', 'non_negative_integer'],
    ['MEMPALACE_GIT_WORKSPACE_MB', '-1', 'positive_integer'],
    ['MEMPALACE_EMBED_THREADS', 'two', 'positive_integer'],
    ['MEMPALACE_OPENSEARCH_SHARDS', '0', 'positive_integer'],
    ['MEMPALACE_OPENSEARCH_REPLICAS', '-1', 'non_negative_integer'],
    ['MEMPALACE_OPENSEARCH_EF_SEARCH', '0', 'positive_integer'],
    ['MEMPALACE_OPENSEARCH_EF_SEARCH', '10001', 'maximum'],
    ['OPENSEARCH_URL', 'localhost 9200', 'url'],
    ['NEO4J_URI', 'not a uri', 'url'],
    ['REDIS_URL', '6379', 'url'],
    ['MEMPALACE_OAUTH_ISSUER', 'issuer', 'url'],
  ])('refuses %s=%j at startup, naming the variable and the rule %s', (variable, value, rule) => {
    const e = thrownBy(() => loadConfig({ HOME: '/tmp/h', [variable]: value }));
    expect(e.toJSON()).toMatchObject({ code: 'invalid_argument', field: variable, rule });
    expect(e.message).toContain(variable);
    expect(e.message).toContain(`'${value}'`);
  });

  it('checks the OAuth URLs when the issuer is set', () => {
    const oauth = { HOME: '/tmp/h', MEMPALACE_OAUTH_ISSUER: 'https://issuer.example' };
    expect(thrownBy(() => loadConfig({ ...oauth, MEMPALACE_OAUTH_RESOURCE: 'mcp' })).toJSON()).toMatchObject({ field: 'MEMPALACE_OAUTH_RESOURCE',
      rule: 'url' });
    expect(thrownBy(() => loadConfig({ ...oauth, MEMPALACE_OAUTH_JWKS_URL: 'keys' })).toJSON()).toMatchObject({ field: 'MEMPALACE_OAUTH_JWKS_URL',
      rule: 'url' });
    expect(loadConfig({ ...oauth, MEMPALACE_OAUTH_RESOURCE: 'https://mcp.example/mcp' }).api.oauth).toMatchObject({ issuer: 'https://issuer.example',
      resource: 'https://mcp.example/mcp' });
  });

  it('accepts good values, trimmed, and blank means the default', () => {
    const c = loadConfig({
      HOME: '/tmp/h',
      LOG_LEVEL: ' debug ',
      LOG_FORMAT: 'json',
      MEMPALACE_API_RATE_PER_S: '50',
      MEMPALACE_JOB_LEASE_MS: '1000',
      MEMPALACE_MCP_IDLE_HOURS: '0.5',
      MEMPALACE_MCP_JOB_WAIT_S: '0',
      REDIS_URL: 'rediss://cache.internal:6380',
      MEMPALACE_GIT_TIMEOUT_S: '',
      MEMPALACE_OPENSEARCH_SHARDS: ' 6 ',
      MEMPALACE_OPENSEARCH_REPLICAS: '1',
      MEMPALACE_OPENSEARCH_EF_SEARCH: '400',
    });
    expect(c.opensearch).toEqual({ url: 'http://127.0.0.1:9200', shards: 6, replicas: 1, efSearch: 400 });
    expect(c.log).toEqual({ level: 'debug', format: 'json' });
    expect(c.api.ratePerSecond).toBe(50);
    expect(c.jobLeaseMs).toBe(1000);
    expect(c.mcp.idleHours).toBe(0.5);
    expect(c.mcp.jobWaitSeconds).toBe(0);
    expect(c.redis.url).toBe('rediss://cache.internal:6380');
    expect(c.sources.gitTimeoutMs).toBe(600_000);
    expect(c.warnings).toEqual([]);
    expect(loadConfig({ HOME: '/tmp/h' }).log).toEqual({ level: 'info', format: undefined });
  });

  it.each([
    ['MEMPALACE_SYNC_INTERVAL', 'soon', 'number', (c: Config) => c.sync.intervalS, 15],
    ['MEMPALACE_SYNC_HTTP_TIMEOUT', '0', 'minimum', (c: Config) => c.sync.httpTimeoutS, 30],
    ['MEMPALACE_SSE_MAX_CLIENTS', 'lots', 'positive_integer', (c: Config) => c.logstream.sseMaxClients, 8],
    ['MEMPALACE_MAX_CHUNKS_PER_FILE', '-3', 'non_negative_integer', (c: Config) => c.maxChunksPerFile, 0],
  ] as const)('keeps the spec default for an unparseable %s=%j, and warns naming it', (variable, value, rule, read, fallback) => {
    const c = loadConfig({ HOME: '/tmp/h', [variable]: value });
    expect(read(c)).toBe(fallback);
    expect(c.warnings).toEqual([{ variable, rule, message: expect.stringContaining(variable) }]);
  });
});
