/**
 * Registered sources and push webhooks, the pure parts: repository URLs normalised so the same
 * repository matches however a provider spells it; pushes matched by repository and ref; GitHub
 * HMAC signatures and GitLab tokens checked; payloads parsed; the in-process refresh debounce.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkNotifySettings, signature } from '../../jobs/notify.js';
import { isPushEvent, parsePush, providerOf, signatureValid } from '../../api/webhooks.js';
import { loadConfig } from '../../app/config.js';
import type { GitPush } from '../../palace/sources/registered-sources.js';
import { isRepoUrl, repoMatchKey, sourcesForPush } from '../../palace/sources/registered-sources.js';
import type { RegisteredSource } from '../../stores/ports/registered-sources.js';
import { RefreshDebouncer } from '../../jobs/engines/local/refresh-debouncer.js';
import { quietLogger } from '../helpers/log.js';

const source = (id: string, location: string, ref = 'main'): RegisteredSource => ({
  source_id: id,
  kind: 'git',
  location,
  match_key: repoMatchKey(location),
  ref,
  mode: 'projects',
  added_by: 't',
  added_at: '2026-01-01T00:00:00.000Z',
});

describe('repository identity', () => {
  it('is the same for https, ssh, scp-like and .git-suffixed spellings, and differs between repositories', () => {
    const spellings = ['https://github.com/Team/Repo', 'https://github.com/team/repo.git', 'git@github.com:team/Repo.git', 'ssh://git@github.com:22/team/repo',
      'https://user:tok@GitHub.com/team/repo/', 'git://github.com/team/repo.git'];
    expect(new Set(spellings.map(repoMatchKey))).toEqual(new Set(['github.com/team/repo']));
    expect(repoMatchKey('https://github.com/team/other')).not.toBe(repoMatchKey('https://github.com/team/repo'));
    expect(repoMatchKey('https://gitlab.com/team/repo')).not.toBe(repoMatchKey('https://github.com/team/repo'));
    expect(repoMatchKey('file:///srv/git/repo.git')).toBe('file:/srv/git/repo');
    expect(repoMatchKey('/srv/git/repo.git/')).toBe('file:/srv/git/repo');
  });

  it('refuses what is not a repository location, naming the field', () => {
    expect(() => repoMatchKey('ftp://example.com/repo')).toThrow(expect.objectContaining({ field: 'location', rule: 'git_url' }));
    expect(() => repoMatchKey('just-a-name')).toThrow(expect.objectContaining({ field: 'location', rule: 'git_url' }));
    expect(isRepoUrl('git@github.com:team/repo.git')).toBe(true);
    expect(isRepoUrl('/srv/projects/app')).toBe(false);
    expect(isRepoUrl('relative/dir')).toBe(false);
  });

  it('matches a push to the sources of that repository whose ref was pushed', () => {
    const sources = [source('a', 'git@github.com:team/repo.git'), source('b', 'https://github.com/team/repo', 'release'),
      source('c', 'https://github.com/team/other'), { ...source('d', '/x'), kind: 'dir' as const, match_key: undefined }];
    const push: GitPush = { provider: 'github', repoUrls: ['https://github.com/team/repo.git', 'git@github.com:team/repo.git'], ref: 'refs/heads/main',
      after: 'abc' };
    expect(sourcesForPush(sources, push).map((s) => s.source_id)).toEqual(['a']);
    expect(sourcesForPush(sources, { ...push, ref: 'refs/tags/release' }).map((s) => s.source_id)).toEqual(['b']);
    expect(sourcesForPush(sources, { ...push, ref: 'refs/heads/feature' })).toEqual([]);
    expect(sourcesForPush(sources, { ...push, repoUrls: ['not a url'] })).toEqual([]);
  });
});

describe('webhook deliveries', () => {
  const secret = 'hook-secret';
  const body = Buffer.from(
    JSON.stringify({ ref: 'refs/heads/main', after: 'f00d',
      repository: { clone_url: 'https://github.com/team/repo.git', ssh_url: 'git@github.com:team/repo.git' } }),
  );
  const sign = (b: Buffer, key = secret) => `sha256=${createHmac('sha256', key).update(b).digest('hex')}`;

  it('accepts a GitHub body signed with the secret and refuses a wrong key, a changed body or a missing header', () => {
    expect(signatureValid('github', { 'x-hub-signature-256': sign(body) }, body, secret)).toBe(true);
    expect(signatureValid('github', { 'x-hub-signature-256': sign(body, 'other') }, body, secret)).toBe(false);
    expect(signatureValid('github', { 'x-hub-signature-256': sign(body) }, Buffer.concat([body, Buffer.from(' ')]), secret)).toBe(false);
    expect(signatureValid('github', {}, body, secret)).toBe(false);
    expect(signatureValid('github', { 'x-hub-signature-256': 'sha256=short' }, body, secret)).toBe(false);
  });

  it('accepts the GitLab token only when it is the secret', () => {
    expect(signatureValid('gitlab', { 'x-gitlab-token': secret }, body, secret)).toBe(true);
    expect(signatureValid('gitlab', { 'x-gitlab-token': `${secret}x` }, body, secret)).toBe(false);
    expect(signatureValid('gitlab', {}, body, secret)).toBe(false);
  });

  it('tells the provider and push events apart', () => {
    expect(providerOf({ 'x-github-event': 'push' })).toEqual({ provider: 'github', event: 'push' });
    expect(providerOf({ 'x-gitlab-event': 'Push Hook' })).toEqual({ provider: 'gitlab', event: 'Push Hook' });
    expect(() => providerOf({})).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    expect(isPushEvent('github', 'ping')).toBe(false);
    expect(isPushEvent('gitlab', 'Tag Push Hook')).toBe(true);
  });

  it('parses GitHub and GitLab pushes; a deleted ref is nothing to mine', () => {
    expect(parsePush('github', JSON.parse(body.toString()))).toEqual({ provider: 'github',
      repoUrls: ['https://github.com/team/repo.git', 'git@github.com:team/repo.git'], ref: 'refs/heads/main', after: 'f00d' });
    const gitlab = { object_kind: 'push', ref: 'refs/heads/main', after: 'aa', checkout_sha: 'bb',
      project: { git_http_url: 'https://gitlab.com/team/repo.git', git_ssh_url: 'git@gitlab.com:team/repo.git' } };
    expect(parsePush('gitlab', gitlab)).toMatchObject({ repoUrls: ['https://gitlab.com/team/repo.git', 'git@gitlab.com:team/repo.git'], after: 'bb' });
    expect(
      parsePush('github', { ref: 'refs/heads/x', deleted: true, after: '0000000000000000000000000000000000000000',
        repository: { clone_url: 'https://github.com/a/b' } }),
    ).toBeUndefined();
    expect(() => parsePush('github', { after: 'x' })).toThrow(expect.objectContaining({ field: 'ref' }));
    expect(() => parsePush('github', { ref: 'refs/heads/main' })).toThrow(expect.objectContaining({ field: 'repository' }));
    expect(() => parsePush('github', [1])).toThrow(expect.objectContaining({ field: 'body' }));
  });
});

describe('in-process refresh debounce', () => {
  const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('turns requests within the window into one run, and requests during a run into exactly one more after it', async () => {
    const runs: string[] = [];
    const releases = new Map<string, () => void>();
    const release = (id: string) => releases.get(id)?.();
    const debouncer = new RefreshDebouncer(async (id) => {
      runs.push(id);
      await new Promise<void>((r) => {
        releases.set(id, r);
      });
    }, 200, quietLogger());
    const a = source('a', 'https://h/x/a');
    for (let i = 0; i < 5; i++) await debouncer.request(a);
    await debouncer.request(source('b', 'https://h/x/b'));
    await tick(800);
    expect(runs.sort()).toEqual(['a', 'b']);
    // Three requests while a's run is in progress: one more run, after it ends.
    for (let i = 0; i < 3; i++) await debouncer.request(a);
    await tick(800);
    expect(runs.filter((r) => r === 'a')).toHaveLength(1);
    release('a');
    release('b');
    await tick(50);
    expect(runs.filter((r) => r === 'a')).toHaveLength(1);
    await tick(800);
    expect(runs.filter((r) => r === 'a')).toHaveLength(2);
    release('a');
    await tick(800);
    expect(runs.filter((r) => r === 'a')).toHaveLength(2);
    await debouncer.close();
  });
});

describe('notification settings', () => {
  it('reads the webhook and notification variables, the notification key defaulting to the webhook secret', () => {
    const c = loadConfig({ MEMPALACE_WEBHOOK_SECRET: 's', MEMPALACE_NOTIFY_URLS: ' http://a/x , https://b/y ,', MEMPALACE_REFRESH_DEBOUNCE_MS: '500' });
    expect(c.hooks).toEqual({ webhookSecret: 's', refreshDebounceMs: 500, refreshMaxWaitMs: 300_000, notifyUrls: ['http://a/x', 'https://b/y'],
      notifySecret: 's', notifyAttempts: 8, notifyBackoffMs: 2000 });
    expect(loadConfig({ MEMPALACE_WEBHOOK_SECRET: 's', MEMPALACE_NOTIFY_SECRET: 'n' }).hooks.notifySecret).toBe('n');
    expect(loadConfig({}).hooks).toMatchObject({ webhookSecret: undefined, notifyUrls: [], notifySecret: undefined, refreshDebounceMs: 30_000 });
  });

  it('refuses URLs that are not http(s), and URLs without a signing key', () => {
    expect(() => checkNotifySettings(['ftp://x/y'], 'k')).toThrow(expect.objectContaining({ field: 'MEMPALACE_NOTIFY_URLS', rule: 'http_url' }));
    expect(() => checkNotifySettings(['http://x/y'], undefined)).toThrow(expect.objectContaining({ field: 'MEMPALACE_NOTIFY_SECRET', rule: 'required' }));
    expect(() => checkNotifySettings([], undefined)).not.toThrow();
    expect(signature('key', '{"a":1}')).toBe(`sha256=${createHmac('sha256', 'key').update('{"a":1}').digest('hex')}`);
  });
});
