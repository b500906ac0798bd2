/**
 * A job worker in its own process, for tests that kill workers (SIGKILL) or stop them (SIGTERM)
 * mid-run. Stores as in temporal-harness.ts; settings from the environment (MEMPALACE_PALACE,
 * MEMPALACE_PALACE_NAME, MEMPALACE_TASK_QUEUE, TEMPORAL_ADDRESS, REDIS_URL; optionally
 * WORKER_MAX_ACTIVITIES and WORKER_SHUTDOWN_GRACE_MS). Prints `worker ready` once it polls and
 * `worker stopped` after a graceful shutdown.
 */
import { MiniLmEmbedder } from '../../embed/minilm.js';
import { loadConfig } from '../../app/config.js';
import { inProcessWorker, openClusterTestStores } from './temporal-harness.js';

const config = loadConfig();
const stores = await openClusterTestStores(config.palaceDir, process.env.MEMPALACE_PALACE_NAME!);
const embedder = new MiniLmEmbedder(config);
const worker = await inProcessWorker(stores, embedder, config.temporal.taskQueue, {
  address: config.temporal.address,
  ...(process.env.WORKER_SHUTDOWN_GRACE_MS ? { shutdownGraceMs: Number(process.env.WORKER_SHUTDOWN_GRACE_MS) } : {}),
  ...(process.env.WORKER_MAX_ACTIVITIES ? { maxConcurrentActivities: Number(process.env.WORKER_MAX_ACTIVITIES) } : {}),
});
const running = worker.run();
process.stdout.write('worker ready\n');
await running;
await stores.close();
await embedder.close();
process.stdout.write('worker stopped\n');
