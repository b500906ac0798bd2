/**
 * What a mine under faults is compared with: the same source mined once, undisturbed, by the
 * embedded profile's in-process runner in a palace of its own. Returns that mine's drawer ids, sorted.
 */
import { expect } from 'vitest';
import { openRuntime } from '../../app/runtime.js';
import { loadConfig } from '../../app/config.js';
import type { Embedder } from '../../embed/embedder.js';
import { drawerIds, mineSpec } from '../integration/temporal-harness.js';

/** `env` adds settings to the clean run's configuration (a mine window of 1, say). */
export async function cleanMineDrawerIds(
  palaceDir: string,
  source: string,
  wing: string,
  embedder: Embedder,
  env: Record<string, string> = {},
): Promise<string[]> {
  const clean = await openRuntime(loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: palaceDir, ...env }), { embedder });
  try {
    const started = await clean.jobs.start(mineSpec(source, wing));
    expect((await clean.jobs.wait(started.job_id, 600_000)).state).toBe('completed');
    return await drawerIds(clean.stores.drawers, wing);
  } finally {
    await clean.close();
  }
}
