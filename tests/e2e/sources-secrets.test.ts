/**
 * Secrets and registered sources on the embedded profile, over HTTP (issue 24: S1, S2, S3, S4,
 * W1, W2): a token in a repository URL is used for the clone and appears nowhere else; a token
 * whose roots exclude a source can neither refresh nor remove it; notification URLs are shown
 * whole to admins only; the port is part of a source's identity; a webhook delivery cannot be
 * replayed; a push body past the REST limit is still accepted.
 */
import { execFile } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authenticator } from '../../api/auth.js';
import { loadConfig } from '../../app/config.js';
import { exportPalace } from '../../palace/backup/export.js';
import type { RegisteredSource } from '../../stores/ports/registered-sources.js';
import { httpsGitServer, type HttpsGitServer } from '../helpers/https-git.js';
import type { Listener } from '../helpers/hooks.js';
import { githubPush, listener, localRepo, proseFiles, until } from '../helpers/hooks.js';
import type { ApiHarness } from './api-harness.js';
import { API_TOKENS, startApi, tempDir } from './api-harness.js';

const run = promisify(execFile);
const TOKEN = 'glpat-S3cr3tT0kenValue42';
const HOOK_SECRET = 'hook-secret-for-tests';
const NOTIFY_PATH_SECRET = 'T0PSECRETPATH';

/** Every file under `dir` whose bytes contain `needle`. */
function filesContaining(dir: string, needle: string): string[] {
  const found: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const p = path.join(e.parentPath, e.name);
    if (fs.readFileSync(p).includes(needle)) found.push(p);
  }
  return found;
}

describe('source secrets, bounds and webhooks (embedded, HTTP)', () => {
  let root: string;
  let h: ApiHarness;
  let git: HttpsGitServer;
  let sink: Listener;
  let allowed: string;
  let savedHome: string | undefined;

  beforeAll(async () => {
    root = tempDir('secrets');
    allowed = path.join(root, 'allowed');
    fs.mkdirSync(path.join(allowed, 'team-a'), { recursive: true });
    fs.mkdirSync(path.join(allowed, 'team-b'), { recursive: true });
    const served = path.join(root, 'served');
    fs.mkdirSync(served);
    const repo = await localRepo(path.join(root, 'origin'));
    await repo.commit(proseFiles('docs', 3, 'secret'), 'first');
    await run('git', ['clone', '--quiet', '--bare', repo.url.slice('file://'.length), path.join(served, 'repo.git')]);
    git = await httpsGitServer(path.join(root, 'tls'), served, 'oauth2', TOKEN);
    sink = await listener();
    sink.answer = () => 500;
    // The hardened git runner passes HOME: the one whose .gitconfig trusts the test server's certificate.
    savedHome = process.env.HOME;
    const modelDir = loadConfig().modelDir;
    process.env.HOME = git.home;
    h = await startApi({
      env: {
        MEMPALACE_ALLOWED_ROOTS: allowed,
        MEMPALACE_GIT_ALLOWED_HOSTS: `127.0.0.1:${git.port},127.0.0.1`,
        MEMPALACE_WEBHOOK_SECRET: HOOK_SECRET,
        MEMPALACE_REFRESH_DEBOUNCE_MS: '600000',
        MEMPALACE_NOTIFY_URLS: `${sink.url}/hooks/${NOTIFY_PATH_SECRET}?token=abc`,
        MEMPALACE_NOTIFY_SECRET: 'k',
        MEMPALACE_NOTIFY_ATTEMPTS: '1',
        MEMPALACE_NOTIFY_BACKOFF_MS: '50',
        MEMPALACE_MODEL_DIR: modelDir,
      },
      auth: Authenticator.fromTokens([...API_TOKENS, ['tok-team-b', { identity: 'bob', scopes: ['read', 'write'], roots: [path.join(allowed, 'team-b')] }]]),
    });
  });
  afterAll(async () => {
    process.env.HOME = savedHome;
    await h?.close();
    await git?.close();
    await sink?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('S1: a token in a repository URL authenticates the clone and reaches no listing, drawer, job, export or palace file but the 0600 credential store', async () => {
    const location = `https://oauth2:${TOKEN}@127.0.0.1:${git.port}/repo.git`;
    const added = await h.call('/v1/sources', { token: 'tok-alice', body: { location, ref: 'main', wing: 'secret_wing' } });
    expect(added.status).toBe(201);
    const source = (await added.json()) as RegisteredSource;
    expect(JSON.stringify(source)).not.toContain(TOKEN);

    const refresh = await h.call(`/v1/sources/${source.source_id}/refresh`, { method: 'POST', token: 'tok-alice' });
    expect(refresh.status).toBe(202);
    const { job_id } = (await refresh.json()) as { job_id: string };
    const done = await h.runtime.jobs.wait(job_id, 240_000);
    expect(done).toMatchObject({ state: 'completed', files_mined: 3 });
    // git asked for the credential and got it through GIT_ASKPASS, never on a command line.
    expect(git.authorizations).toContain(`oauth2:${TOKEN}`);
    expect(git.processList).not.toBe('');
    expect(git.processList).not.toContain(TOKEN);

    const shown = [
      await (await h.call('/v1/sources', { token: 'tok-reader' })).text(),
      await (await h.call(`/v1/sources/${source.source_id}`, { token: 'tok-reader' })).text(),
      await (await h.call(`/v1/jobs/${job_id}`, { token: 'tok-reader' })).text(),
      await (await h.call('/v1/search?query=webhook%20refresh&limit=10', { token: 'tok-reader' })).text(),
      JSON.stringify(await h.runtime.stores.jobs.get(job_id)),
    ];
    expect(shown[3]).toContain(`https://127.0.0.1:${git.port}/repo.git:docs/`);
    for (const text of shown) expect(text).not.toContain(TOKEN);

    const exported = path.join(root, 'palace.jsonl.gz');
    await exportPalace(h.runtime.stores, h.runtime.embedder.identity, exported);
    expect(gunzipSync(fs.readFileSync(exported)).toString('utf8')).not.toContain(TOKEN);

    const store = path.join(h.palaceDir, 'source-credentials.json');
    expect(filesContaining(h.palaceDir, TOKEN)).toEqual([store]);
    expect(fs.statSync(store).mode & 0o777).toBe(0o600);
  });

  it('S2: a token whose roots exclude a registered directory can neither refresh nor remove it', async () => {
    const added = await h.call('/v1/sources', { token: 'tok-alice', body: { location: path.join(allowed, 'team-a'), wing: 'team_a' } });
    expect(added.status).toBe(201);
    const { source_id } = (await added.json()) as RegisteredSource;
    for (const [method, url] of [['POST', `/v1/sources/${source_id}/refresh`], ['DELETE', `/v1/sources/${source_id}`]] as const) {
      const res = await h.call(url, { method, token: 'tok-team-b' });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'invalid_argument', field: 'source_id', rule: 'token_roots' });
    }
    expect((await h.runtime.stores.sources.get(source_id))?.last_refresh).toBeUndefined();
    expect((await h.call(`/v1/sources/${source_id}`, { method: 'DELETE', token: 'tok-alice' })).status).toBe(200);
  });

  it('S3: notification URLs are whole for admins and scheme and host only for read tokens', async () => {
    const mined = await h.call('/v1/jobs/mine', { token: 'tok-alice', body: { source: path.join(allowed, 'team-b'), wing: 'notify_wing' } });
    expect(mined.status).toBe(202);
    await until('the dead letter', async () => {
      const body = (await (await h.call('/v1/notifications')).json()) as { dead_letters: unknown[] };
      return body.dead_letters.length > 0 ? body : undefined;
    }, 120_000);
    const admin = await (await h.call('/v1/notifications')).text();
    expect(admin).toContain(NOTIFY_PATH_SECRET);
    const reader = await (await h.call('/v1/notifications', { token: 'tok-reader' })).text();
    expect(reader).not.toContain(NOTIFY_PATH_SECRET);
    expect(reader).not.toContain('token=abc');
    expect(reader).toContain(new URL(sink.url).origin);
  });

  it('S4: the same path on another port is another source', async () => {
    const onPort = await h.call('/v1/sources', { token: 'tok-alice', body: { location: `https://127.0.0.1:${git.port}/team/x.git`, ref: 'main' } });
    const onDefault = await h.call('/v1/sources', { token: 'tok-alice', body: { location: 'https://127.0.0.1/team/x.git', ref: 'main' } });
    expect([onPort.status, onDefault.status]).toEqual([201, 201]);
    const a = (await onPort.json()) as RegisteredSource;
    const b = (await onDefault.json()) as RegisteredSource;
    expect(a.source_id).not.toBe(b.source_id);
    const listed = ((await (await h.call('/v1/sources')).json()) as { sources: RegisteredSource[] }).sources.map((s) => s.location);
    expect(listed).toEqual(expect.arrayContaining([`https://127.0.0.1:${git.port}/team/x.git`, 'https://127.0.0.1/team/x.git']));
  });

  it('W1: a delivery replayed (same id, or the same signed body under a new id) is refused and schedules nothing', async () => {
    const repoUrl = `https://127.0.0.1:${git.port}/team/x.git`;
    const push = githubPush(repoUrl, 'a'.repeat(40), HOOK_SECRET);
    const first = await h.call('/v1/hooks/git', { token: null, rawBody: push.rawBody, headers: push.headers });
    expect(first.status).toBe(202);
    expect(((await first.json()) as { sources: unknown[] }).sources).toHaveLength(1);
    const again = await h.call('/v1/hooks/git', { token: null, rawBody: push.rawBody, headers: push.headers });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ code: 'conflict', field: 'X-GitHub-Delivery', rule: 'webhook_replay' });
    const renamed = await h.call('/v1/hooks/git', { token: null, rawBody: push.rawBody, headers: { ...push.headers, 'x-github-delivery': randomUUID() } });
    expect(renamed.status).toBe(409);
    const stale = JSON.stringify({ ...JSON.parse(push.rawBody) as object, after: 'b'.repeat(40),
      repository: { clone_url: repoUrl, pushed_at: Math.floor(Date.now() / 1000) - 3 * 86_400 } });
    const staleRes = await h.call('/v1/hooks/git', { token: null, rawBody: stale,
      headers: { ...push.headers, 'x-github-delivery': randomUUID(),
        'x-hub-signature-256': `sha256=${createHmac('sha256', HOOK_SECRET).update(stale).digest('hex')}` } });
    expect(staleRes.status).toBe(400);
    expect(await staleRes.json()).toMatchObject({ field: 'repository.pushed_at', rule: 'webhook_stale' });
  });

  it('W2: a signed push of 2 MiB (past the 256 KiB REST limit) is accepted and matched', async () => {
    const repoUrl = `https://127.0.0.1:${git.port}/team/x.git`;
    const commits = Array.from({ length: 2048 }, (_, i) => ({ id: `${i}`.padStart(40, '0'), message: 'x'.repeat(1000) }));
    const rawBody = JSON.stringify({ ref: 'refs/heads/main', after: 'c'.repeat(40), repository: { clone_url: repoUrl }, commits });
    expect(rawBody.length).toBeGreaterThan(2 * 1024 * 1024);
    const headers = { 'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': randomUUID(),
      'x-hub-signature-256': `sha256=${createHmac('sha256', HOOK_SECRET).update(rawBody).digest('hex')}` };
    const res = await h.call('/v1/hooks/git', { token: null, rawBody, headers });
    expect(res.status).toBe(202);
    expect(((await res.json()) as { sources: unknown[] }).sources).toHaveLength(1);
  });
});
