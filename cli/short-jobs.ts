/**
 * The short jobs a cluster worker serves besides its Temporal task queue: the BullMQ trigger
 * queue's source refreshes (started as mine jobs) and agent-hook auto-saves (filed with the
 * worker's stores and embedder).
 */
import { runAutoSave } from '../palace/session-save.js';
import type { Runtime } from './runtime.js';

export async function startTriggerHandlers(rt: Runtime): Promise<{ close(): Promise<void> }> {
  const { refreshWithJobEngine, startTriggerWorker } = await import('../workflows/queues/queues.js');
  const worker = startTriggerWorker({ redisUrl: rt.config.redis.url, palaceName: rt.config.palaceName }, {
    refresh: refreshWithJobEngine(rt.jobs),
    autoSave: (req) => runAutoSave(rt.drawerContext, req),
  });
  await worker.waitUntilReady();
  return { close: () => worker.close() };
}
