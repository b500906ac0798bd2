/**
 * On the cluster profile the API reports BullMQ queue depths: a `mempalace_queue_jobs` gauge in
 * /metrics and a `queues` frame on the dashboard stream. Real Redis, OpenSearch and Neo4j.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobProgress } from '../../jobs/job.js';
import { NotificationQueue } from '../../jobs/engines/queues/queues.js';
import type { ApiHarness } from './api-harness.js';
import { readSse, startApi } from './api-harness.js';

const palaceName = `api-queues-${Date.now().toString(36)}`;
let h: ApiHarness;
let notifications: NotificationQueue;

beforeAll(async () => {
  h = await startApi({ env: { MEMPALACE_PROFILE: 'cluster', MEMPALACE_PALACE_NAME: palaceName } });
  notifications = new NotificationQueue({ redisUrl: h.runtime.config.redis.url, palaceName });
});

afterAll(async () => {
  await notifications?.queue.obliterate({ force: true }).catch(() => undefined);
  await notifications?.close();
  await h?.close();
});

function gauge(metrics: string, queue: string, state: string): number | undefined {
  const line = metrics.split('\n').find((l) => l.startsWith(`mempalace_queue_jobs{queue="${queue}",state="${state}"}`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

describe('queue depths on the cluster profile', () => {
  it('exports a gauge per queue and state that follows the queue', async () => {
    const before = await (await h.call('/metrics')).text();
    expect(gauge(before, 'trigger', 'waiting')).toBe(0);
    const waiting = gauge(before, 'notification', 'waiting')!;
    const done = { job_id: `job-${palaceName}`, kind: 'mine', state: 'completed', lock_key: 'k', finished_at: new Date().toISOString(), files_seen: 1,
      drawers_written: 2 } as unknown as JobProgress;
    await notifications.publish(done);
    const after = await (await h.call('/metrics')).text();
    expect(gauge(after, 'notification', 'waiting')).toBe(waiting + 1);
  });

  it('sends a queues frame on the dashboard stream', async () => {
    const res = await h.call('/v1/dashboard/stream');
    expect(res.status).toBe(200);
    const frames = await readSse(res, (fs) => fs.some((f) => f.event === 'queues'));
    const q = JSON.parse(frames.find((f) => f.event === 'queues')!.data) as { queues: Record<string, number> };
    expect(q.queues.notification).toBeGreaterThanOrEqual(1);
    expect(q.queues.trigger).toBe(0);
  });
});
