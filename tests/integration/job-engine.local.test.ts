/**
 * The JobEngine contract on the embedded profile's in-process runner: SQLite stores and file
 * locks in a throwaway palace directory, the real embedder, a mine window of 2 batches.
 * In the integration project (not contract): its scenarios mine ~1 700 real files with the
 * embedding model, beyond the contract project's per-test bound for store ports.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openRuntime } from '../../app/runtime.js';
import { loadConfig } from '../../app/config.js';
import { MiniLmEmbedder } from '../../embed/minilm.js';
import { describeJobEngineContract } from '../contract/job-engine.contract.js';

const MINE_WINDOW = 2;

describeJobEngineContract('in-process runner (embedded)', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mempalace-engine-local-'));
  const embedder = new MiniLmEmbedder(loadConfig());
  const rt = await openRuntime(loadConfig({
    ...process.env,
    MEMPALACE_PROFILE: 'embedded',
    MEMPALACE_PALACE: path.join(dir, 'palace'),
    MEMPALACE_JOB_LEASE_MS: '8000',
    MEMPALACE_MINE_PARALLEL_BATCHES: String(MINE_WINDOW),
  }), { embedder });
  return {
    engine: rt.jobs,
    drawers: rt.stores.drawers,
    locks: rt.stores.locks,
    palace: rt.stores.palace,
    mineWindow: MINE_WINDOW,
    async cleanup() {
      await rt.close();
      await embedder.close();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
});
