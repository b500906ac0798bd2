/**
 * The runtime behind the MCP server: after `mempalace_reconnect` the server closes the runtime it
 * serves now (the reopened one) and the reconnect closed the one before, each exactly once; and
 * every transport shares the runtime's one logstream context, so the mesh profile is computed
 * once per cache window whichever transport asks.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openRuntime } from '../../app/runtime.js';
import { loadConfig } from '../../app/config.js';
import { meshPeers } from '../../palace/logstream/logstream.js';
import type { Runtime } from '../../palace/runtime.js';
import type { CallContext } from '../../mcp/types.js';
import { PalaceMcp } from '../../mcp/server.js';
import { quietLogger } from '../helpers/log.js';

const dirs: string[] = [];
function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `mempalace-mcp-runtime-${prefix}-`));
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const call = (): CallContext => ({ caller: undefined, signal: new AbortController().signal, onJobProgress: undefined, clientRoots: async () => undefined });

/** A runtime whose close calls are counted (and still close it). */
function counted(rt: Runtime): { rt: Runtime; closes: () => number } {
  let n = 0;
  const close = rt.close.bind(rt);
  rt.close = async () => {
    n++;
    await close();
  };
  return { rt, closes: () => n };
}

describe('the MCP server and its runtime', () => {
  it('closes the reopened runtime on close, and the reconnect closed the first one, each once', async () => {
    const config = loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: tempDir('palace') });
    const first = counted(await openRuntime(config));
    const reopened: { rt: Runtime; closes: () => number }[] = [];
    const mcp = new PalaceMcp(first.rt, {
      home: tempDir('home'),
      log: quietLogger(),
      reopen: async () => {
        const next = counted(await openRuntime(config));
        reopened.push(next);
        return next.rt;
      },
    });
    const result = await mcp.callTool('mempalace_reconnect', {}, call());
    expect(result.structuredContent).toMatchObject({ success: true, drawers: 0 });
    expect(reopened).toHaveLength(1);
    expect(mcp.runtime).toBe(reopened[0]!.rt);
    expect(first.closes()).toBe(1);
    expect(reopened[0]!.closes()).toBe(0);
    await mcp.close();
    expect(first.closes()).toBe(1);
    expect(reopened[0]!.closes()).toBe(1);
    await expect(reopened[0]!.rt.stores.drawers.count()).rejects.toThrow();
  });

  it('computes the mesh profile once for repeated MCP calls and the REST context alike', async () => {
    const config = loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: tempDir('palace') });
    const runtime = await openRuntime(config);
    try {
      const mesh = runtime.logstreamContext.mesh;
      const facts = mesh.nodeFacts!;
      let asked = 0;
      mesh.nodeFacts = async () => {
        asked++;
        return facts();
      };
      const mcp = new PalaceMcp(runtime, { home: tempDir('home'), log: quietLogger() });
      const first = (await mcp.callTool('mempalace_mesh_peers', {}, call())).structuredContent as {
        self: { profile: { advertised_at: string; drawers: number } };
      };
      const second = (await mcp.callTool('mempalace_mesh_peers', {}, call())).structuredContent as typeof first;
      const rest = await meshPeers(runtime.logstreamContext);
      expect(asked).toBe(1);
      expect(first.self.profile.drawers).toBe(0);
      expect(second.self.profile).toEqual(first.self.profile);
      expect(rest.self.profile).toEqual(first.self.profile);
    } finally {
      await runtime.close();
    }
  });
});
