/**
 * The pure and single-process parts of issue 24's secret and source findings: credentials split
 * off source URLs and masked in log lines; sources registered by older versions migrated on open
 * (credential moved out, port-aware id); the in-process debounce's maximum wait; notification
 * URLs reduced to scheme and host for callers who are not admins.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { maskUrlCredentials, splitUrlCredential } from '../../core/url-credentials.js';
import { notificationsFor } from '../../palace/hooks/notifications.js';
import { migrateRegisteredSources, repoMatchKey } from '../../palace/sources/registered-sources.js';
import { FileSourceCredentials } from '../../stores/embedded/file-source-credentials.js';
import { SqliteRegisteredSources } from '../../stores/embedded/sqlite-registered-sources.js';
import type { RegisteredSource } from '../../stores/ports/registered-sources.js';
import { RefreshDebouncer } from '../../jobs/engines/local/refresh-debouncer.js';
import { capturedLogger, quietLogger } from '../helpers/log.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mempalace-sources-secrets-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('credentials in source URLs', () => {
  it('splits every https user-info off, keeps an ssh login, and refuses an ssh password', () => {
    expect(splitUrlCredential('location', 'https://oauth2:tok%40en@git.example.com:8443/team/repo.git')).toEqual({
      url: 'https://git.example.com:8443/team/repo.git',
      credential: { username: 'oauth2', password: 'tok@en' },
    });
    expect(splitUrlCredential('location', 'https://ghp_abc@github.com/x/y.git')).toEqual({ url: 'https://github.com/x/y.git',
      credential: { username: 'ghp_abc', password: '' } });
    expect(splitUrlCredential('location', 'ssh://git@host:2222/x/y.git')).toEqual({ url: 'ssh://git@host:2222/x/y.git' });
    expect(splitUrlCredential('location', 'git@host:x/y.git')).toEqual({ url: 'git@host:x/y.git' });
    expect(() => splitUrlCredential('location', 'ssh://git:pw@host/x.git')).toThrow(expect.objectContaining({ field: 'location', rule: 'git_ssh_password' }));
  });

  it('masks credentials written into URLs anywhere in a log line, keeping the ssh login', () => {
    expect(maskUrlCredentials('git fetch https://oauth2:s3cret@h/x.git failed; ssh://git:pw@h/y ok; ssh://git@h/z')).toBe(
      'git fetch https://***@h/x.git failed; ssh://git:***@h/y ok; ssh://git@h/z',
    );
    const { log, records } = capturedLogger();
    log.error({ url: 'https://oauth2:s3cret@h/x.git' }, 'clone of https://tok@h/y.git failed');
    expect(JSON.stringify(records)).not.toContain('s3cret');
    expect(JSON.stringify(records)).not.toContain('tok@');
  });
});

describe('repository identity', () => {
  it("keeps a non-default port, and drops the scheme's default one", () => {
    const keys = { 'https://host:8443/team/repo.git': 'host:8443/team/repo', 'https://host/team/repo': 'host/team/repo',
      'https://host:443/team/repo': 'host/team/repo', 'ssh://git@host:22/Team/Repo': 'host/team/repo', 'ssh://git@host:2222/team/repo': 'host:2222/team/repo' };
    for (const [url, key] of Object.entries(keys)) expect(repoMatchKey(url), url).toBe(key);
  });
});

describe('migration of registered sources on open', () => {
  it('moves a credential out of a stored URL into the 0600 store, and gives a non-default port its own id', async () => {
    const dir = path.join(tmp, 'migrate');
    fs.mkdirSync(dir);
    const sources = new SqliteRegisteredSources(path.join(dir, 'jobs.sqlite3'));
    const credentials = new FileSourceCredentials(dir);
    const old: RegisteredSource = {
      source_id: 'src_0123456789abcdef',
      kind: 'git',
      location: 'https://oauth2:s3cret@host:8443/team/repo.git',
      match_key: 'host/team/repo',
      ref: 'main',
      mode: 'projects',
      added_by: 'alice',
      added_at: '2026-01-01T00:00:00.000Z',
      last_refresh: { trigger: 'manual', requested_at: '2026-01-01T00:00:00.000Z', state: 'failed',
        error: 'git fetch https://oauth2:s3cret@host:8443/team/repo.git failed' },
    };
    await sources.put(old);
    expect(await migrateRegisteredSources({ sources, credentials })).toBe(1);
    const [moved, ...others] = await sources.list();
    expect(others).toEqual([]);
    expect(moved).toMatchObject({ location: 'https://host:8443/team/repo.git', match_key: 'host:8443/team/repo', last_refresh: { state: 'failed' } });
    expect(moved!.source_id).not.toBe(old.source_id);
    expect(JSON.stringify(moved)).not.toContain('s3cret');
    expect(await credentials.get('https://host:8443/team/repo.git')).toEqual({ username: 'oauth2', password: 's3cret' });
    expect(fs.statSync(path.join(dir, 'source-credentials.json')).mode & 0o777).toBe(0o600);
    // Idempotent: a second open changes nothing.
    expect(await migrateRegisteredSources({ sources, credentials })).toBe(0);
    await sources.close();
  });
});

describe('in-process refresh debounce: maximum wait', () => {
  it('refreshes at most maxWait after the first push, although pushes keep restarting the quiet period', async () => {
    const runs: number[] = [];
    const debouncer = new RefreshDebouncer(async () => {
      runs.push(Date.now());
    }, 400, quietLogger(), 1_000);
    const source: RegisteredSource = { source_id: 's', kind: 'git', location: 'https://h/x', match_key: 'h/x', ref: 'main', mode: 'projects', added_by: 't',
      added_at: '2026-01-01T00:00:00.000Z' };
    const start = Date.now();
    while (Date.now() - start < 2_600) {
      await debouncer.request(source);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(runs[0]! - start).toBeLessThan(1_300);
    await debouncer.close();
  });

  it('remembers claimed deliveries for their window', async () => {
    const debouncer = new RefreshDebouncer(async () => undefined, 400, quietLogger());
    expect(await debouncer.claimDelivery(['github:1', 'body:a'], 200)).toBe(true);
    expect(await debouncer.claimDelivery(['github:2', 'body:a'], 200)).toBe(false);
    expect(await debouncer.claimDelivery(['github:1', 'body:b'], 200)).toBe(false);
    await new Promise((r) => setTimeout(r, 250));
    expect(await debouncer.claimDelivery(['github:1', 'body:a'], 200)).toBe(true);
    await debouncer.releaseDelivery(['github:1', 'body:a']);
    expect(await debouncer.claimDelivery(['github:1', 'body:a'], 200)).toBe(true);
    await debouncer.close();
  });
});

describe('notification URLs', () => {
  it('are whole for admins, scheme and host only for others, in deliveries, errors and dead letters', () => {
    const url = 'https://hooks.example.com:8443/services/T0/B0/XSECRET?token=abc';
    const view = {
      deliveries: [{ id: 'd', job_id: 'j', kind: 'mine', state: 'completed', status: 'pending' as const, attempts: 1, delivered: [url],
        error: `notification not delivered to ${url} (HTTP 500)`, updated_at: undefined }],
      dead_letters: [{ queue: 'notification', id: 'd', name: 'job_completed', data: { url }, failedReason: `notification not delivered to ${url} (HTTP 500)`,
        attemptsMade: 8, finishedOn: 1 }],
    };
    expect(notificationsFor(view, true)).toEqual(view);
    const shown = JSON.stringify(notificationsFor(view, false));
    expect(shown).not.toContain('XSECRET');
    expect(shown).not.toContain('token=abc');
    expect(shown).toContain('https://hooks.example.com:8443 (HTTP 500)');
  });
});
