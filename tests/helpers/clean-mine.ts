/**
 * What a mine under faults is compared with: the same source mined once, undisturbed, by the
 * embedded profile's in-process runner in a palace of its own: its drawer ids, sorted
 * (cleanMineDrawerIds), and the test file's whole setting around it (useCleanMineSource).
 */
import path from 'node:path';
import { beforeAll, expect } from 'vitest';
import { openRuntime } from '../../app/runtime.js';
import { loadConfig } from '../../app/config.js';
import type { Embedder } from '../../embed/embedder.js';
import type { EmbedderInTempDir } from './real-embedder.js';
import { useEmbedderInTempDir } from './real-embedder.js';
import { drawerIds, generateSmallFiles, mineSpec } from '../integration/temporal-harness.js';

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

export interface CleanMineSourceOptions {
  /** The temp directory's name prefix. */
  prefix: string;
  wing: string;
  /** Small files generated into the source (generateSmallFiles), with this seed. */
  files: number;
  seed: number;
  /** Writes more files into the source after the small ones, before the clean run. */
  addFiles?: (source: string) => Promise<void>;
  /** Settings of the clean run (see cleanMineDrawerIds). */
  cleanEnv?: Record<string, string>;
}

export interface CleanMineSource extends EmbedderInTempDir {
  source: string;
  /** The clean run's drawer ids, sorted. */
  expected: string[];
}

/**
 * The setting every mine-under-faults test file starts from, built once in its beforeAll and torn
 * down after its afterAll: a temp directory with a generated source, the real embedder, and the
 * drawer ids of an undisturbed mine of that source. The fields are set once the file's first
 * beforeAll hooks have run.
 */
export function useCleanMineSource(options: CleanMineSourceOptions): CleanMineSource {
  const fixture = useEmbedderInTempDir(options.prefix) as CleanMineSource;
  beforeAll(async () => {
    fixture.source = path.join(fixture.tmp, 'source');
    await generateSmallFiles(fixture.source, options.files, options.seed);
    await options.addFiles?.(fixture.source);
    fixture.expected = await cleanMineDrawerIds(path.join(fixture.tmp, 'palace-clean'), fixture.source, options.wing, fixture.embedder, options.cleanEnv);
  });
  return fixture;
}
