import { describe, expect, it } from 'vitest';
import { isTruthy, loadConfig } from '../../core/config.js';

describe('config', () => {
  it('defaults to the embedded profile', () => {
    const c = loadConfig({ HOME: '/tmp/h' });
    expect(c.profile).toBe('embedded');
    expect(c.mcp.jobWaitSeconds).toBe(25);
    expect(c.logstream.sseMaxClients).toBe(8);
  });
  it('reads the cluster settings and truthy flags', () => {
    const c = loadConfig({ MEMPALACE_PROFILE: 'cluster', REDIS_URL: 'redis://127.0.0.1:6390', MEMPALACE_MCP_READ_ONLY: ' Yes ', MEMPALACE_ALLOWED_ROOTS: '/a:/b' });
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
