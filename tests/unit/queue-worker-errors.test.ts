/**
 * A short-job consumer whose Redis is unreachable reports its own connection errors through
 * `onWorkerError`, named by queue, instead of dropping them (they belong to no job, so no failed
 * job would ever show them).
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { NOTIFICATION_QUEUE, startNotificationDeliveryWorker } from '../../jobs/engines/queues/queues.js';

/** A loopback port that nothing listens on: bound once by the OS, then released. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('short-job queue consumers', () => {
  it('report a lost Redis through onWorkerError with the queue name', async () => {
    const seen: Array<{ queue: string; message: string }> = [];
    const port = await closedPort();
    const worker = startNotificationDeliveryWorker({
      redisUrl: `redis://127.0.0.1:${port}`,
      palaceName: 'unreachable',
      onWorkerError: (queue, e) => seen.push({ queue, message: e.message }),
    }, async () => ({ delivered: [], failed: [] }), () => new Error('not delivered'));
    try {
      const deadline = Date.now() + 20_000;
      while (seen.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(seen[0]?.queue).toBe(NOTIFICATION_QUEUE);
      expect(seen[0]?.message).toMatch(/ECONNREFUSED/);
    } finally {
      await worker.close(true);
    }
  });
});
