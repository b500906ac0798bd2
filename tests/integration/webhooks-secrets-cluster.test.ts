/**
 * The cluster side of issue 24's source and webhook findings (S1, W1), over the real Redis and
 * BullMQ: a credential in a registered source's URL lives only in the palace's Redis credential
 * hash — not in the source record nor in the trigger queue's refresh payload; two API replicas
 * of one palace share the memory of webhook deliveries, so a replay to the other replica is
 * refused; and the trigger queue's debounce runs a refresh at most the maximum wait after the
 * first push, although pushes keep coming.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisConnections } from '../../stores/redis/connection.js';
import type { RegisteredSource } from '../../stores/ports/registered-sources.js';
import { TriggerQueue, startTriggerWorker } from '../../jobs/engines/queues/queues.js';
import type { ApiHarness } from '../e2e/api-harness.js';
import { startApi, tempDir } from '../e2e/api-harness.js';
import { githubPush } from '../helpers/hooks.js';
import { uniquePalaceName } from './temporal-harness.js';

const SECRET = 'webhook-secret-for-tests';
const TOKEN = 'glpat-ClusterS3cretValue';

let root: string;
let palaceName: string;
let a: ApiHarness;
let b: ApiHarness;
let triggers: TriggerQueue;

beforeAll(async () => {
  root = tempDir('secrets-cluster');
  palaceName = uniquePalaceName('secrets');
  const env = {
    MEMPALACE_PROFILE: 'cluster',
    MEMPALACE_PALACE_NAME: palaceName,
    MEMPALACE_TASK_QUEUE: `tq-${palaceName}`,
    MEMPALACE_ALLOWED_ROOTS: root,
    MEMPALACE_GIT_ALLOWED_HOSTS: '127.0.0.1:8443',
    MEMPALACE_WEBHOOK_SECRET: SECRET,
    MEMPALACE_REFRESH_DEBOUNCE_MS: '600000',
  };
  a = await startApi({ env });
  b = await startApi({ env });
  triggers = new TriggerQueue({ redisUrl: a.runtime.config.redis.url, palaceName });
});

afterAll(async () => {
  await triggers?.queue.obliterate({ force: true }).catch(() => undefined);
  await triggers?.close();
  await fetch(`${a?.runtime.config.opensearch.url}/mempalace-${palaceName}*`, { method: 'DELETE' }).catch(() => undefined);
  const redis = a ? new RedisConnections({ url: a.runtime.config.redis.url, palaceName }) : undefined;
  await a?.close();
  await b?.close();
  await redis?.dropPalace();
  await redis?.close();
  await fs.rm(root, { recursive: true, force: true });
});

describe('source secrets and webhooks on the cluster profile', () => {
  it("S1: keeps a URL credential in the palace's Redis hash only, never in the source or the refresh payload", async () => {
    const res = await a.call('/v1/sources', { token: 'tok-alice', body: { location: `https://oauth2:${TOKEN}@127.0.0.1:8443/team/repo.git`, ref: 'main' } });
    expect(res.status).toBe(201);
    const source = (await res.json()) as RegisteredSource;
    expect(source.location).toBe('https://127.0.0.1:8443/team/repo.git');
    expect(await (await b.call('/v1/sources', { token: 'tok-reader' })).text()).not.toContain(TOKEN);
    // Another replica (as a worker would) reads the credential from the shared store.
    expect(await b.runtime.stores.credentials.get(source.location)).toEqual({ username: 'oauth2', password: TOKEN });

    const push = githubPush(source.location, 'a'.repeat(40), SECRET);
    expect((await a.call('/v1/hooks/git', { token: null, rawBody: push.rawBody, headers: push.headers })).status).toBe(202);
    const queued = await triggers.queue.getJobs(['delayed', 'waiting'], 0, 10);
    expect(queued.length).toBeGreaterThan(0);
    expect(JSON.stringify(queued.map((j) => j.data))).not.toContain(TOKEN);
    expect(JSON.stringify(queued.map((j) => j.data))).toContain(source.location);

    // W1 across replicas: the same delivery at the other replica is a replay.
    const replay = await b.call('/v1/hooks/git', { token: null, rawBody: push.rawBody, headers: push.headers });
    expect(replay.status).toBe(409);
    expect(await replay.json()).toMatchObject({ rule: 'webhook_replay', field: 'X-GitHub-Delivery' });
    const renamed = await b.call('/v1/hooks/git', { token: null, rawBody: push.rawBody, headers: { ...push.headers, 'x-github-delivery': randomUUID() } });
    expect(renamed.status).toBe(409);
  });

  it('W1: the trigger queue refreshes at most the maximum wait after the first push, while pushes keep coming', async () => {
    const name = uniquePalaceName('maxwait');
    const settings = { redisUrl: a.runtime.config.redis.url, palaceName: name };
    const queue = new TriggerQueue(settings, 1_000, 2_500);
    const runs: number[] = [];
    const worker = startTriggerWorker(settings, { refresh: async () => {
      runs.push(Date.now());
    }, autoSave: async () => undefined });
    try {
      const spec = { kind: 'mine' as const, source: { kind: 'dir' as const, path: root }, mode: 'projects' as const, wing: undefined, agent: 'mempalace',
        limit: 0, dryRun: false, extract: 'exchange' as const, respectGitignore: true, includeIgnored: [] };
      const start = Date.now();
      while (Date.now() - start < 6_000) {
        await queue.requestRefresh({ spec, sourceId: 'src_maxwait' });
        await new Promise((r) => setTimeout(r, 300));
      }
      expect(runs.length).toBeGreaterThanOrEqual(1);
      expect(runs[0]! - start).toBeLessThan(4_000);
    } finally {
      await worker.close();
      await queue.queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      const redis = new RedisConnections({ url: settings.redisUrl, palaceName: name });
      await redis.dropPalace();
      await redis.close();
    }
  });
});
