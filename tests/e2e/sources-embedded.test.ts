/**
 * Registered sources on the embedded profile: the `mempalace sources` commands as a user runs
 * them (a child process per command), and over HTTP the in-process side of webhooks and
 * notifications — a GitLab push debounced into one refresh, a push for another ref ignored, the
 * job-end notification retried after a 500 with a valid signature, and a dead letter retried
 * from the API.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RegisteredSource } from '../../stores/ports/registered-sources.js';
import type { Listener, LocalRepo } from '../helpers/hooks.js';
import { failFirstAttempt, listener, localRepo, proseFiles, until, validSignature } from '../helpers/hooks.js';
import type { ApiHarness } from './api-harness.js';
import { startApi, tempDir } from './api-harness.js';
import { embeddedJsonCli } from '../helpers/cli.js';

const SECRET = 'gitlab-token-for-tests';

describe('mempalace sources (CLI)', () => {
  const tmp = tempDir('sources-cli');
  const palace = path.join(tmp, 'palace');
  const project = path.join(tmp, 'project');
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  const mempalace = embeddedJsonCli(palace, { MEMPALACE_ALLOWED_ROOTS: tmp, MEMPALACE_ENTITY_REGISTRY: path.join(tmp, 'none.json') });

  // Each command is a process that opens the palace (tens of seconds on a loaded machine).
  const LONG = 900_000;
  let id: string;

  it('refuses a missing directory and one outside the allowed roots with exit code 2, registering nothing', () => {
    for (const [rel, text] of Object.entries(proseFiles('docs', 4, 'cli'))) {
      fs.mkdirSync(path.dirname(path.join(project, rel)), { recursive: true });
      fs.writeFileSync(path.join(project, rel), text);
    }
    const bad = mempalace('sources', 'add', path.join(tmp, 'absent'));
    expect(bad.code).toBe(2);
    expect(bad.json).toMatchObject({ code: 'invalid_argument', field: 'location', rule: 'exists' });
    const outside = mempalace('sources', 'add', '/');
    expect(outside.code).toBe(2);
    expect(outside.json).toMatchObject({ field: 'location', rule: 'allowed_roots' });
    expect(mempalace('sources', 'list').json).toEqual({ sources: [] });
  }, LONG);

  it('adds a directory source and refreshes it (incrementally the second time)', () => {
    const added = mempalace('sources', 'add', project, '--wing', 'cli_wing');
    expect(added.code).toBe(0);
    expect(added.json).toMatchObject({ kind: 'dir', location: project, wing: 'cli_wing', mode: 'projects', added_by: 'cli' });
    id = added.json.source_id as string;

    const refreshed = mempalace('sources', 'refresh', id);
    expect(refreshed.code).toBe(0);
    expect(refreshed.json).toMatchObject({ kind: 'mine', state: 'completed', files_mined: 4, wing: 'cli_wing', trigger: 'refresh' });
    const listed = mempalace('sources', 'list').json.sources as RegisteredSource[];
    expect(listed).toHaveLength(1);
    expect(listed[0]!.last_refresh).toMatchObject({ trigger: 'manual', state: 'completed', job_id: refreshed.json.job_id,
      drawers_written: refreshed.json.drawers_written });
    // A second refresh is incremental: every file is unchanged.
    expect(mempalace('sources', 'refresh', id).json).toMatchObject({ state: 'completed', files_mined: 0, files_skipped: 4 });
  }, LONG);

  it('removes it; removing it again is not_found', () => {
    expect(mempalace('sources', 'remove', id)).toMatchObject({ code: 0, json: { removed: id } });
    expect(mempalace('sources', 'remove', id)).toMatchObject({ code: 1, json: { code: 'not_found', field: 'source_id' } });
    expect(mempalace('sources', 'list').json).toEqual({ sources: [] });
  }, LONG);
});

describe('webhooks and notifications in-process (embedded)', () => {
  let h: ApiHarness;
  let repo: LocalRepo;
  let sink: Listener;
  let root: string;
  let source: RegisteredSource;

  beforeAll(async () => {
    root = tempDir('hooks-embedded');
    repo = await localRepo(path.join(root, 'repo'));
    sink = await listener();
    h = await startApi({ env: {
      MEMPALACE_ALLOWED_ROOTS: root,
      MEMPALACE_WEBHOOK_SECRET: SECRET,
      MEMPALACE_REFRESH_DEBOUNCE_MS: '1500',
      MEMPALACE_NOTIFY_URLS: sink.url,
      MEMPALACE_NOTIFY_SECRET: 'notify-key',
      MEMPALACE_NOTIFY_ATTEMPTS: '2',
      MEMPALACE_NOTIFY_BACKOFF_MS: '100',
    } });
    const res = await h.call('/v1/sources', { token: 'tok-alice', body: { location: repo.url, ref: 'main', wing: 'gl' } });
    expect(res.status).toBe(201);
    source = (await res.json()) as RegisteredSource;
  });
  afterAll(async () => {
    await h?.close();
    await sink?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const gitlabPush = (after: string, token = SECRET, ref = 'refs/heads/main') =>
    h.call('/v1/hooks/git', {
      token: null,
      rawBody: JSON.stringify({ object_kind: 'push', ref, after, checkout_sha: after, project: { git_http_url: repo.url } }),
      headers: { 'content-type': 'application/json', 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': token, 'x-gitlab-event-uuid': randomUUID() },
    });
  const lastRefresh = async () => ((await (await h.call(`/v1/sources/${source.source_id}`)).json()) as RegisteredSource).last_refresh;

  it('debounces GitLab pushes into one refresh of the newest commit; a wrong token or another ref schedules nothing; the end is notified, retried after a 500', async () => {
    sink.answer = failFirstAttempt();
    const shas: string[] = [];
    for (let i = 0; i < 3; i++) {
      shas.push(await repo.commit(proseFiles('notes', 3, `p${i}`), `push ${i}`));
      const res = await gitlabPush(shas[i]!);
      expect(res.status).toBe(202);
      expect(((await res.json()) as { sources: { source_id: string }[] }).sources.map((s) => s.source_id)).toEqual([source.source_id]);
    }
    expect((await gitlabPush(shas[2]!, 'wrong')).status).toBe(401);
    const other = await gitlabPush(shas[2]!, SECRET, 'refs/heads/feature');
    expect(((await other.json()) as { sources: unknown[] }).sources).toEqual([]);

    const done = await until('the refresh', async () => {
      const r = await lastRefresh();
      return r?.state === 'completed' ? r : undefined;
    });
    expect(done).toMatchObject({ trigger: 'webhook', commit: shas[2] });
    const mines = (await h.runtime.jobs.list(20)).filter((j) => j.kind === 'mine');
    expect(mines.map((m) => m.job_id)).toEqual([done.job_id]);
    expect(mines[0]!.files_mined).toBe(9);
    expect(mines[0]!.trigger).toBe('webhook');

    const received = await until('the delivered notification', () => {
      const mine = sink.received.filter((n) => JSON.parse(n.body).job_id === done.job_id);
      return mine.some((n) => n.status === 200) ? mine : undefined;
    }, 30_000);
    expect(received.map((n) => n.status)).toEqual([500, 200]);
    for (const n of received) expect(validSignature(n, 'notify-key')).toBe(true);
    // The notification names what the job worked on and what started it.
    expect(JSON.parse(received[0]!.body)).toMatchObject({ wing: 'gl', trigger: 'webhook', source: repo.url, ref: 'main', mode: 'projects' });
    const events = await h.runtime.stores.logstream.list({ stream: 'ops', room: 'jobs', type: 'job.finished', correlation_id: done.job_id, order: 'asc',
      limit: 5 });
    expect(events).toHaveLength(1);
  });

  it('keeps a notification out of attempts as a dead letter, shown in /metrics, until retried from the API', async () => {
    sink.answer = () => 500;
    const started = await h.call(`/v1/sources/${source.source_id}/refresh`, { token: 'tok-alice', method: 'POST' });
    expect(started.status).toBe(202);
    const { job_id: jobId } = (await started.json()) as { job_id: string };
    const dead = await until('the dead letter', async () => {
      const n = (await (await h.call('/v1/notifications', { token: 'tok-reader' })).json()) as {
        dead_letters: { queue: string; id: string; attemptsMade: number; data: { job_id: string } }[];
      };
      return n.dead_letters.find((d) => d.data.job_id === jobId);
    }, 60_000);
    expect(dead).toMatchObject({ queue: 'notification', attemptsMade: 2 });
    expect(await (await h.call('/metrics', { token: 'tok-reader' })).text()).toMatch(/^mempalace_dead_letters 1$/m);
    sink.answer = () => 200;
    expect((await h.call(`/v1/dead-letters/trigger/${dead.id}/retry`, { token: 'tok-alice', method: 'POST' })).status).toBe(400);
    expect((await h.call(`/v1/dead-letters/notification/${dead.id}/retry`, { token: 'tok-alice', method: 'POST' })).status).toBe(200);
    await until('the retried delivery', () => (sink.received.some((n) => JSON.parse(n.body).job_id === jobId && n.status === 200) ? true : undefined), 30_000);
    await until('no dead letters',
      async () => (/^mempalace_dead_letters 0$/m.test(await (await h.call('/metrics', { token: 'tok-reader' })).text()) ? true : undefined), 30_000);
    const deliveries =
      ((await (await h.call('/v1/notifications', { token: 'tok-reader' })).json()) as { deliveries: { job_id: string; status: string; attempts: number }[] })
        .deliveries;
    expect(deliveries.find((d) => d.job_id === jobId)).toMatchObject({ status: 'delivered', attempts: 1 });
  });
});
