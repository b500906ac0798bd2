/**
 * A throwaway palace on the configured profile, removed afterwards whatever happens: a temporary
 * directory (embedded), or a palace of its own random name on the cluster's engines, whose
 * OpenSearch indices, Neo4j nodes and Redis keys are dropped at the end. `mempalace eval` files a
 * conversational set into one.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from './config.js';
import type { Runtime } from '../palace/runtime.js';
import { dropPalace } from '../stores/open.js';
import { openRuntime } from './runtime.js';

/** Runs `fn` on a fresh palace configured like `env` (its profile and engines), then removes it. */
export async function withTemporaryPalace<T>(env: NodeJS.ProcessEnv, prefix: string, fn: (rt: Runtime) => Promise<T>): Promise<T> {
  const name = `${prefix}-${randomBytes(5).toString('hex')}`;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `mempalace-${prefix}-`));
  const config = loadConfig({ ...env, MEMPALACE_PALACE: dir, MEMPALACE_PALACE_NAME: name });
  try {
    const rt = await openRuntime(config);
    try {
      return await fn(rt);
    } finally {
      await rt.close();
    }
  } finally {
    await dropPalace(config);
    await fs.rm(dir, { recursive: true, force: true });
  }
}
