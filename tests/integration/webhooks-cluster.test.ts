/**
 * Registered sources, git push webhooks and job-end notifications on the cluster profile, end to
 * end: the HTTP API of `mempalace serve` (this process) and a real `mempalace worker` process
 * (Temporal worker plus the BullMQ trigger and notification consumers) over the real Redis,
 * Temporal, OpenSearch and Neo4j. The source is a local git repository (file:// origin inside the
 * allowed roots) that the test commits and pushes to; notifications go to a local HTTP listener.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobProgress } from '../../jobs/job.js';
import type { RegisteredSource } from '../../stores/ports/registered-sources.js';
import { NotificationQueue, TriggerQueue } from '../../jobs/engines/queues/queues.js';
import type { ApiHarness } from '../e2e/api-harness.js';
import { startApi, tempDir } from '../e2e/api-harness.js';
import type { Listener, LocalRepo } from '../helpers/hooks.js';
import { failFirstAttempt, githubPush, listener, localRepo, proseFiles, until, validSignature } from '../helpers/hooks.js';
import { uniquePalaceName } from './temporal-harness.js';

const SECRET = 'webhook-secret-for-tests';
const NOTIFY_SECRET = 'notify-secret-for-tests';
const CLI = fileURLToPath(new URL('../../cli/main.ts', import.meta.url));

let root: string;
let palaceName: string;
let h: ApiHarness;
let worker: ChildProcess;
let workerLog = '';
let repo: LocalRepo;
let sink: Listener;
let triggers: TriggerQueue;
let notifications: NotificationQueue;
let source: RegisteredSource;

async function json<T>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

const push = (after: string, secret = SECRET) => {
  const delivery = githubPush(repo.url, after, secret);
  return h.call('/v1/hooks/git', { token: null, rawBody: delivery.rawBody, headers: delivery.headers });
};

const current = async (): Promise<RegisteredSource> => json<RegisteredSource>(await h.call(`/v1/sources/${source.source_id}`));

/** Every mine of the registered source, oldest first. */
async function minesOfSource(): Promise<JobProgress[]> {
  const lockKeyOf = (await h.runtime.jobs.progress((await current()).last_refresh!.job_id!)).lock_key;
  return (await h.runtime.jobs.list(500)).filter((j) => j.kind === 'mine' && j.lock_key === lockKeyOf).reverse();
}

async function queueIdle(): Promise<boolean> {
  const c = await triggers.queue.getJobCounts('waiting', 'active', 'delayed');
  return (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) === 0;
}

beforeAll(async () => {
  root = tempDir('hooks-cluster');
  palaceName = uniquePalaceName('hooks');
  repo = await localRepo(path.join(root, 'repo'));
  sink = await listener();
  const env = {
    MEMPALACE_PROFILE: 'cluster',
    MEMPALACE_PALACE_NAME: palaceName,
    MEMPALACE_TASK_QUEUE: `tq-${palaceName}`,
    MEMPALACE_ALLOWED_ROOTS: root,
    MEMPALACE_WEBHOOK_SECRET: SECRET,
    MEMPALACE_REFRESH_DEBOUNCE_MS: '4000',
    MEMPALACE_NOTIFY_URLS: sink.url,
    MEMPALACE_NOTIFY_SECRET: NOTIFY_SECRET,
    MEMPALACE_NOTIFY_ATTEMPTS: '3',
    MEMPALACE_NOTIFY_BACKOFF_MS: '300',
  };
  h = await startApi({ env });
  const settings = { redisUrl: h.runtime.config.redis.url, palaceName };
  triggers = new TriggerQueue(settings);
  notifications = new NotificationQueue(settings);
  worker = spawn(process.execPath, ['--import', 'tsx', CLI, 'worker', '--max-activities', '2'], {
    env: { ...process.env, ...env, MEMPALACE_PALACE: path.join(root, 'worker-palace') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  worker.stdout!.on('data', (c: Buffer) => {
    workerLog += c.toString();
  });
  worker.stderr!.on('data', (c: Buffer) => {
    workerLog += c.toString();
  });
  await until('the worker to consume both queues', async () => {
    if (worker.exitCode !== null) throw new Error(`worker exited: ${workerLog}`);
    return (await triggers.queue.getWorkers()).length > 0 && (await notifications.queue.getWorkers()).length > 0 ? true : undefined;
  }, 120_000);
});

afterAll(async () => {
  if (worker && worker.exitCode === null) {
    worker.kill('SIGTERM');
    await new Promise((r) => worker.once('exit', r));
  }
  await triggers?.queue.obliterate({ force: true }).catch(() => undefined);
  await notifications?.queue.obliterate({ force: true }).catch(() => undefined);
  await triggers?.close();
  await notifications?.close();
  await h?.runtime.stores.sources.list().then(async (list) => {
    for (const s of list) await h.runtime.stores.sources.remove(s.source_id);
  }).catch(() => undefined);
  await fetch(`${h?.runtime.config.opensearch.url}/mempalace-${palaceName}*`, { method: 'DELETE' }).catch(() => undefined);
  await h?.close();
  await sink?.close();
  await fs.rm(root, { recursive: true, force: true });
});

describe('git push webhooks and notifications on the cluster profile', () => {
  it('registers a source over REST (write scope) and lists it', async () => {
    expect((await h.call('/v1/sources', { token: 'tok-reader', body: { location: repo.url, ref: 'main' } })).status).toBe(403);
    const res = await h.call('/v1/sources', { token: 'tok-alice', body: { location: repo.url, ref: 'main', wing: 'hooked' } });
    expect(res.status).toBe(201);
    source = await json<RegisteredSource>(res);
    expect(source).toMatchObject({ kind: 'git', location: repo.url, ref: 'main', wing: 'hooked', added_by: 'alice' });
    const listed = await json<{ sources: RegisteredSource[] }>(await h.call('/v1/sources', { token: 'tok-reader' }));
    expect(listed.sources.map((s) => s.source_id)).toEqual([source.source_id]);
    const bad = await h.call('/v1/sources', { token: 'tok-alice', body: { location: repo.url, mode: 'nope' } });
    expect(bad.status).toBe(400);
    expect(await json(bad)).toMatchObject({ code: 'invalid_argument', field: 'mode' });
  });

  it('refuses a badly signed push with 401 and enqueues nothing', async () => {
    const sha = await repo.commit(proseFiles('docs', 1, 'unsigned'), 'unsigned push');
    const wrong = await push(sha, 'not-the-secret');
    expect(wrong.status).toBe(401);
    expect(await json(wrong)).toMatchObject({ code: 'unauthenticated', field: 'X-Hub-Signature-256' });
    const delivery = githubPush(repo.url, sha, SECRET);
    const tampered = await h.call('/v1/hooks/git', { token: null, rawBody: delivery.rawBody.replace('main', 'mainx'), headers: delivery.headers });
    expect(tampered.status).toBe(401);
    const gitlab = await h.call('/v1/hooks/git', { token: null, rawBody: delivery.rawBody,
      headers: { 'content-type': 'application/json', 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': 'wrong' } });
    expect(gitlab.status).toBe(401);
    expect(await triggers.queue.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed')).toEqual({ waiting: 0, active: 0, delayed: 0, completed: 0,
      failed: 0 });
    expect((await current()).last_refresh).toBeUndefined();
  });

  it('turns 5 pushes within the debounce window into 1 refresh that mines the newest commit, and notifies its end (retried after a 500)', async () => {
    sink.answer = failFirstAttempt();
    const shas: string[] = [];
    for (let i = 0; i < 5; i++) {
      shas.push(await repo.commit(proseFiles('docs', 6, `push${i}`), `push ${i}`));
      const res = await push(shas[i]!);
      expect(res.status).toBe(202);
      expect((await json<{ sources: { source_id: string }[] }>(res)).sources.map((s) => s.source_id)).toEqual([source.source_id]);
    }
    const done = await until('the refresh to complete', async () => {
      const r = (await current()).last_refresh;
      return r?.state === 'completed' ? r : undefined;
    });
    expect(done.trigger).toBe('webhook');
    expect(done.commit).toBe(shas[4]);
    await until('the trigger queue to drain', async () => ((await queueIdle()) ? true : undefined));
    const mines = await minesOfSource();
    expect(mines).toHaveLength(1);
    expect(mines[0]!.files_mined).toBe(31);
    expect(await h.runtime.stores.drawers.count({ wing: 'hooked' })).toBe(mines[0]!.drawers_written);

    const jobId = done.job_id!;
    const deliveries = await until('a delivered notification', () => {
      const mine = sink.received.filter((n) => JSON.parse(n.body).job_id === jobId);
      return mine.some((n) => n.status === 200) ? mine : undefined;
    }, 60_000);
    expect(deliveries.map((n) => n.status)).toEqual([500, 200]);
    for (const n of deliveries) expect(validSignature(n, NOTIFY_SECRET)).toBe(true);
    expect(validSignature({ ...deliveries[1]!, body: deliveries[1]!.body.replace('completed', 'failed') }, NOTIFY_SECRET)).toBe(false);
    expect(JSON.parse(deliveries[1]!.body)).toMatchObject({ type: 'job.finished', job_id: jobId, kind: 'mine', state: 'completed', palace: palaceName,
      drawers_written: mines[0]!.drawers_written });
    // Agents can wait on the job in the logstream.
    const events = await h.runtime.stores.logstream.list({ stream: 'ops', room: 'jobs', type: 'job.finished', correlation_id: jobId, order: 'asc', limit: 10 });
    expect(events).toHaveLength(1);
    expect(JSON.parse(deliveries[1]!.body).event_id).toBe(events[0]!.id);
  });

  it('gives exactly one more refresh for pushes during a running refresh, after it, mining the newest commit', async () => {
    sink.answer = () => 200;
    const before = (await minesOfSource()).length;
    const big = await repo.commit(proseFiles('bulk', 300, 'bulk'), 'a big push');
    expect((await push(big)).status).toBe(202);
    const running = await until('the refresh to run', async () => {
      const r = (await current()).last_refresh;
      return r?.state === 'running' && r.job_id !== undefined ? r : undefined;
    });
    const late: string[] = [];
    for (let i = 0; i < 3; i++) {
      late.push(await repo.commit(proseFiles('late', 1, `late${i}`), `late push ${i}`));
      expect((await push(late[i]!)).status).toBe(202);
    }
    expect((await h.runtime.jobs.progress(running.job_id!)).state).toBe('running');
    const last = await until('the refresh after it to complete', async () => {
      const r = (await current()).last_refresh;
      return r?.state === 'completed' && r.job_id !== running.job_id ? r : undefined;
    });
    expect(last.commit).toBe(late[2]);
    await until('the trigger queue to drain', async () => ((await queueIdle()) ? true : undefined));
    const mines = (await minesOfSource()).slice(before);
    expect(mines.map((m) => m.job_id)).toEqual([running.job_id, last.job_id]);
    expect(Date.parse(mines[1]!.started_at)).toBeGreaterThanOrEqual(Date.parse(mines[0]!.finished_at!));
    // The running mine may have fetched after the first late push; between them, every new file is mined once.
    expect(mines[0]!.files_mined + mines[1]!.files_mined).toBe(303);
    expect(mines[1]!.files_mined).toBeGreaterThanOrEqual(1);
  });

  it('keeps a notification that exhausts its attempts as a dead letter (in /metrics and the API) until retried from the API', async () => {
    sink.answer = () => 500;
    const refresh = await h.call(`/v1/sources/${source.source_id}/refresh`, { token: 'tok-alice', method: 'POST' });
    expect(refresh.status).toBe(202);
    const { job_id: jobId } = await json<{ job_id: string }>(refresh);
    const dead = await until('a dead letter', async () => {
      const n = await json<{ dead_letters: { queue: string; id: string; data: { job_id: string }; attemptsMade: number }[] }>(
        await h.call('/v1/notifications', { token: 'tok-reader' }),
      );
      return n.dead_letters.find((d) => d.data.job_id === jobId);
    }, 120_000);
    expect(dead).toMatchObject({ queue: 'notification', attemptsMade: 3 });
    expect(sink.received.filter((n) => JSON.parse(n.body).job_id === jobId).map((n) => n.status)).toEqual([500, 500, 500]);
    const metrics = await (await h.call('/metrics', { token: 'tok-reader' })).text();
    expect(metrics).toMatch(/^mempalace_dead_letters [1-9]/m);
    expect(metrics).toMatch(/^mempalace_queue_jobs\{queue="notification",state="failed"\} [1-9]/m);

    expect((await h.call(`/v1/dead-letters/notification/${dead.id}/retry`, { token: 'tok-reader', method: 'POST' })).status).toBe(403);
    sink.answer = () => 200;
    const retried = await h.call(`/v1/dead-letters/notification/${dead.id}/retry`, { token: 'tok-alice', method: 'POST' });
    expect(retried.status).toBe(200);
    await until('the retried delivery', () => (sink.received.some((n) => JSON.parse(n.body).job_id === jobId && n.status === 200) ? true : undefined), 60_000);
    const after = await json<{ deliveries: { job_id: string; status: string }[]; dead_letters: unknown[] }>(
      await h.call('/v1/notifications', { token: 'tok-reader' }),
    );
    await until('no dead letters',
      async () => ((await json<{ dead_letters: unknown[] }>(await h.call('/v1/notifications', { token: 'tok-reader' }))).dead_letters.length === 0
        ? true
        : undefined), 30_000);
    expect(after.deliveries.some((d) => d.job_id === jobId)).toBe(true);
    const again = await h.call(`/v1/dead-letters/notification/${dead.id}/retry`, { token: 'tok-alice', method: 'POST' });
    expect(again.status).toBe(400);
    expect(await json(again)).toMatchObject({ code: 'invalid_argument', field: 'id' });
    // Still exactly one job.finished event for the job, whatever the retries.
    expect(await h.runtime.stores.logstream.list({ stream: 'ops', room: 'jobs', correlation_id: jobId, order: 'asc', limit: 10 })).toHaveLength(1);
  });
});
