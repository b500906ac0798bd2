/**
 * A palace of either profile served through the MCP face in process, for the tests that write as
 * several agents and then run jobs on it (the audit trail, revert, ownership): its runtime, the
 * MCP server, a Temporal worker in this process on the cluster profile, and one close that drops
 * all of it.
 */
import { expect } from 'vitest';
import { openRuntime } from '../../app/runtime.js';
import type { Caller } from '../../core/caller.js';
import type { Config } from '../../core/config.js';
import { PalaceMcp } from '../../mcp/server.js';
import type { Runtime } from '../../palace/runtime.js';
import { startClusterWorker } from '../e2e/mcp-harness.js';
import { dropClusterPalace } from './cluster-palace.js';
import { makeTempDir, removeDir } from './tmp.js';

export interface ProfilePalace {
  dir: string;
  config: Config;
  rt: Runtime;
  mcp: PalaceMcp;
  /** `mempalace_<name>` called as `identity` (read and write scopes) over MCP HTTP; fails the test when the tool answers with an error. */
  call(identity: string, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** `configOf` gets a fresh temporary directory (also the allowed roots of the cluster worker). */
export async function openProfilePalace(configOf: (dir: string) => Config, prefix: string): Promise<ProfilePalace> {
  const dir = makeTempDir(prefix);
  const config = configOf(dir);
  const rt = await openRuntime(config);
  const mcp = new PalaceMcp(rt, { home: dir });
  // Cluster jobs run on a worker: one in this process, over its own runtime of the palace.
  const worker = config.profile === 'cluster'
    ? await startClusterWorker({ MEMPALACE_PROFILE: 'cluster', MEMPALACE_PALACE_NAME: config.palaceName, MEMPALACE_ALLOWED_ROOTS: dir })
    : undefined;
  return {
    dir,
    config,
    rt,
    mcp,
    async call(identity, name, args) {
      const caller: Caller = { identity, scopes: ['read', 'write'] };
      const result = await mcp.callTool(`mempalace_${name}`, args, { caller, signal: new AbortController().signal, onJobProgress: undefined,
        clientRoots: async () => undefined, transport: 'mcp-http' });
      const out = result.structuredContent as Record<string, unknown>;
      expect(result.isError ?? false, JSON.stringify(out)).toBe(false);
      return out;
    },
    async close() {
      await worker?.stop();
      await rt.close();
      if (config.profile === 'cluster') await dropClusterPalace(config);
      removeDir(dir);
    },
  };
}
