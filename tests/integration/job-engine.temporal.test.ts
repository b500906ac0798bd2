/**
 * The JobEngine contract on the cluster profile's Temporal engine: the real Temporal server and
 * Redis (leases, job records) with a worker in this process, drawers in a throwaway palace
 * directory (tests/integration/temporal-harness.ts), the real embedder. The mine window is
 * fixed so the cancel bound does not depend on the worker's activity slots.
 * In the integration project: it needs the running engines and bundles the workflows.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../app/config.js';
import { MiniLmEmbedder } from '../../embed/minilm.js';
import { describeJobEngineContract } from '../contract/job-engine.contract.js';
import { inProcessWorker, openClusterTestStores, openEngine, uniquePalaceName } from './temporal-harness.js';

const MINE_WINDOW = 2;

describeJobEngineContract('Temporal (cluster)', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mempalace-engine-temporal-'));
  const embedder = new MiniLmEmbedder(loadConfig());
  const name = uniquePalaceName('engine');
  const stores = await openClusterTestStores(path.join(dir, 'palace'), name);
  const taskQueue = `tq-${name}`;
  const worker = await inProcessWorker(stores, embedder, taskQueue);
  const workerRun = worker.run();
  const engine = await openEngine(stores, taskQueue, undefined, undefined, MINE_WINDOW);
  return {
    engine,
    drawers: stores.drawers,
    locks: stores.locks,
    palace: stores.palaceName,
    mineWindow: MINE_WINDOW,
    async cleanup() {
      worker.shutdown();
      await workerRun;
      await engine.close();
      await stores.dropRedis();
      await stores.close();
      await embedder.close();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
});
