/**
 * The BullMQ queues of the cluster profile on the real Redis: refresh triggers debounced and
 * de-duplicated per source that start mines on Temporal, a refresh retried while a mine of its
 * source runs, job-end notifications published once by the worker, auto-save requests that file
 * once per session state, and dead letters listed and retried.
 */
import path from 'node:path';
import type { Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/hooks.js';
import type { Runtime } from '../../palace/runtime.js';
import { openRuntime } from '../../app/runtime.js';
import { loadConfig } from '../../app/config.js';
import { checkpoint } from '../../palace/drawers/checkpoint.js';
import { deliveryError } from '../../palace/hooks/notifications.js';
import type { JobProgress } from '../../jobs/job.js';
import type { TemporalJobEngine } from '../../jobs/engines/temporal/job-engine.js';
import type { AutoSaveRequest, JobNotification } from '../../jobs/engines/queues/queues.js';
import { NotificationQueue, TriggerQueue, refreshWithJobEngine, startNotificationDeliveryWorker,
  startTriggerWorker } from '../../jobs/engines/queues/queues.js';
import type { ClusterTestStores } from './temporal-harness.js';
import { REDIS_URL, generateSmallFiles, mineSpec, uniquePalaceName } from './temporal-harness.js';
import type { OpenTemporalRig } from '../helpers/temporal-rig.js';
import { openTemporalRig } from '../helpers/temporal-rig.js';
import { useEmbedderInTempDir } from '../helpers/real-embedder.js';

const fx = useEmbedderInTempDir('mempalace-bullmq-');
let stores: ClusterTestStores;
let rig: OpenTemporalRig;
let engine: TemporalJobEngine;
let embedded: Runtime;
let triggers: TriggerQueue;
let notifications: NotificationQueue;
let triggerWorker: Worker;
let notificationWorker: Worker;
const received: JobNotification[] = [];

beforeAll(async () => {
  rig = await openTemporalRig({ dir: fx.tmp, label: 'queues' });
  ({ stores, engine } = rig);
  const settings = { redisUrl: REDIS_URL, palaceName: stores.palaceName, attempts: 12, backoffMs: 300 };
  notifications = new NotificationQueue(settings);
  await rig.runWorker(fx.embedder, { notify: (p) => notifications.publish(p) });
  embedded = await openRuntime(loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: path.join(fx.tmp, 'palace-embedded') }), {
    embedder: fx.embedder,
  });
  triggers = new TriggerQueue(settings, 1_500);
  triggerWorker = startTriggerWorker(settings, {
    refresh: refreshWithJobEngine(engine),
    autoSave: (req) => checkpoint(embedded.drawerContext, req.checkpoint),
  });
  notificationWorker = startNotificationDeliveryWorker(settings, async (event) => {
    received.push(event);
    return { delivered: [], failed: [] };
  }, deliveryError);
});

afterAll(async () => {
  await triggerWorker?.close();
  await notificationWorker?.close();
  await triggers?.queue.obliterate({ force: true }).catch(() => undefined);
  await notifications?.queue.obliterate({ force: true }).catch(() => undefined);
  await triggers?.close();
  await notifications?.close();
  await rig?.close();
  await embedded?.close();
});

const minesOf = async (lockKey: string): Promise<JobProgress[]> => (await engine.list(1000)).filter((p) => p.kind === 'mine' && p.lock_key === lockKey);

describe('BullMQ trigger and notification queues', () => {
  it('refresh requests are debounced and de-duplicated per source, start one mine each, and each end is notified once', async () => {
    const a = path.join(fx.tmp, 'a');
    const b = path.join(fx.tmp, 'b');
    await generateSmallFiles(a, 20, 1);
    await generateSmallFiles(b, 20, 2);
    const ids: string[] = [];
    let lastRequestAt = 0;
    for (let i = 0; i < 5; i++) {
      ids.push((await triggers.requestRefresh({ spec: mineSpec(a, 'a') })).id);
      lastRequestAt = Date.now();
      await new Promise((r) => setTimeout(r, 200));
    }
    const other = await triggers.requestRefresh({ spec: mineSpec(b, 'b') });
    expect(new Set(ids).size).toBe(1);
    expect(other.id).not.toBe(ids[0]);

    const ended = await until('two job-end notifications',
      () => (received.filter((e) => e.kind === 'mine').length >= 2 ? received.filter((e) => e.kind === 'mine') : undefined));
    expect(ended.map((e) => e.state)).toEqual(['completed', 'completed']);
    const jobA = await triggers.queue.getJob(ids[0]!);
    const startedJob = (jobA!.returnvalue as { job_id: string }).job_id;
    const progressA = await engine.progress(startedJob);
    // Debounced: the mine started only after the quiet period that followed the last request.
    expect(Date.parse(progressA.started_at)).toBeGreaterThanOrEqual(lastRequestAt + 1_500 - 50);
    expect(await minesOf(progressA.lock_key)).toHaveLength(1);
    expect(await stores.drawers.count({ wing: 'a' })).toBe(20);
    expect(await stores.drawers.count({ wing: 'b' })).toBe(20);
    expect(ended.map((e) => e.job_id).sort()).toEqual([...new Set(ended.map((e) => e.job_id))].sort());
    // Publishing the same end again is a no-op (deterministic notification id).
    await notifications.publish(progressA);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(received.filter((e) => e.job_id === startedJob)).toHaveLength(1);
  });

  it('a refresh arriving while its source is being mined is retried with backoff and mines after that mine ends', async () => {
    const c = path.join(fx.tmp, 'c');
    await generateSmallFiles(c, 300, 3);
    const first = await engine.start(mineSpec(c, 'c'));
    const { id } = await triggers.requestRefresh({ spec: mineSpec(c, 'c') }, 0);
    const job = await until('the refresh to complete', async () => {
      const j = await triggers.queue.getJob(id);
      return j && (await j.isCompleted()) ? j : undefined;
    });
    expect(job.attemptsMade).toBeGreaterThanOrEqual(1);
    const second = (job.returnvalue as { job_id: string }).job_id;
    expect(second).not.toBe(first.job_id);
    const firstDone = await engine.progress(first.job_id);
    expect(firstDone.state).toBe('completed');
    const secondDone = await engine.wait(second, 120_000);
    expect(secondDone.state).toBe('completed');
    expect(Date.parse(secondDone.started_at)).toBeGreaterThanOrEqual(Date.parse(firstDone.finished_at!) - 50);
    expect(secondDone.files_skipped).toBe(300);
  });

  it('auto-saves file once per session state; one that exhausts its attempts is a dead letter until retried', async () => {
    const name = uniquePalaceName('dlq');
    const settings = { redisUrl: REDIS_URL, palaceName: name, attempts: 3, backoffMs: 50 };
    const queue = new TriggerQueue(settings);
    let storeDown = true;
    const attempts: string[] = [];
    const worker = startTriggerWorker(settings, {
      refresh: async () => undefined,
      autoSave: async (req: AutoSaveRequest) => {
        attempts.push(req.sessionId);
        if (storeDown) throw new Error('drawer store unavailable');
        return checkpoint(embedded.drawerContext, req.checkpoint);
      },
    });
    try {
      const request: AutoSaveRequest = {
        agent: 'hook-agent',
        sessionId: 'session-42',
        messages: 15,
        checkpoint: {
          items: [{ wing: 'sessions', room: 'autosave', content: 'Session 42 decided to debounce webhook refreshes per source and keep failed jobs visible.' }],
          added_by: 'hook-agent',
        },
      };
      const first = await queue.requestAutoSave(request);
      const again = await queue.requestAutoSave(request);
      expect(again.id).toBe(first.id);

      const dead = await until('a dead letter', async () => {
        const letters = await queue.deadLetters();
        return letters.length > 0 ? letters : undefined;
      }, 30_000);
      expect(dead).toHaveLength(1);
      expect(dead[0]).toMatchObject({ id: first.id, name: 'auto_save', failedReason: 'drawer store unavailable', attemptsMade: 3 });
      expect(attempts).toHaveLength(3);
      expect(await embedded.stores.drawers.count({ wing: 'sessions' })).toBe(0);

      storeDown = false;
      await queue.retryDeadLetter(first.id);
      await until('the retried auto-save',
        async () => ((await queue.queue.getJob(first.id))?.finishedOn && (await queue.queue.getJob(first.id))!.returnvalue ? true : undefined), 60_000);
      expect(await queue.deadLetters()).toEqual([]);
      expect(await embedded.stores.drawers.count({ wing: 'sessions' })).toBe(1);
      await expect(queue.retryDeadLetter(first.id)).rejects.toMatchObject({ code: 'invalid_argument', field: 'id' });
    } finally {
      await worker.close();
      await queue.queue.obliterate({ force: true });
      await queue.close();
    }
  });
});
