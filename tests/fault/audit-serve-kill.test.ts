/**
 * The audit trail when `serve` is killed with SIGKILL while three agents write (issue 28): a real
 * `mempalace serve` (each profile: SQLite, and the cluster's Redis Stream trail) takes add_drawer calls from three MCP-over-HTTP clients at
 * once and is killed midway. Every write it acknowledged has exactly one audit record naming its
 * agent; the records of writes cut short by the kill (write-ahead, at most one per writer in
 * flight) are the only ones without a stored drawer; the chain verifies, and a restarted server
 * appends to it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import { openRuntime } from '../../app/runtime.js';
import { verifyAudit } from '../../palace/audit/verify.js';
import { dropClusterPalace } from '../helpers/cluster-palace.js';
import { freePort, stopChild } from '../helpers/processes.js';
import { makeTempDir, removeDir } from '../helpers/tmp.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const AGENTS = ['alice', 'bob', 'carol'] as const;
const TOKENS = AGENTS.map((a) => `tok-${a}=${a}:write`).join(',');

/** `serve` run by node itself (not through the tsx wrapper), so SIGKILL reaches the server. */
async function startServe(palace: string, profileEnv: Record<string, string>, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'cli', 'main.ts'), 'serve', '--port', String(port)], {
    cwd: ROOT,
    env: { ...process.env, MEMPALACE_PALACE: palace, MEMPALACE_API_TOKENS: TOKENS, MEMPALACE_ENTITY_REGISTRY: path.join(palace, '..', 'entities.json'),
      ...profileEnv },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${stderr}`)), 180_000);
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      stderr += chunk;
      if (/mempalace serve: http:\/\//.test(stderr)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}:\n${stderr}`));
    });
  });
  return child;
}

async function client(port: number, agent: string): Promise<Client> {
  const c = new Client({ name: `audit-kill-${agent}`, version: '1.0.0' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: { Authorization: `Bearer tok-${agent}` } } }),
  );
  return c;
}

const PROFILE_ENV = {
  embedded: { MEMPALACE_PROFILE: 'embedded' },
  cluster: { MEMPALACE_PROFILE: 'cluster', MEMPALACE_PALACE_NAME: `audit-kill-${randomBytes(5).toString('hex')}` },
};

describe.each(['embedded', 'cluster'] as const)('audit trail across a SIGKILL of serve (%s)', (profile) => {
  const dir = makeTempDir('mp-audit-kill-');
  const palace = path.join(dir, 'palace');
  const profileEnv = PROFILE_ENV[profile];
  const config = () => loadConfig({ ...process.env, MEMPALACE_PALACE: palace, ...profileEnv });
  const children: ChildProcess[] = [];
  afterAll(async () => {
    for (const child of children) await stopChild(child, 'SIGKILL');
    if (profile === 'cluster') await dropClusterPalace(config());
    removeDir(dir);
  });

  it('keeps one record per acknowledged write of three concurrent writers, and a chain that verifies and goes on', async () => {
    const port = await freePort();
    const serve = await startServe(palace, profileEnv, port);
    children.push(serve);
    const clients = await Promise.all(AGENTS.map((a) => client(port, a)));
    const acked = new Map<string, string[]>(AGENTS.map((a) => [a, []]));
    let killed = false;
    const writers = AGENTS.map(async (agent, k) => {
      for (let i = 0; !killed; i++) {
        try {
          const result = await clients[k]!.callTool({ name: 'mempalace_add_drawer',
            arguments: { wing: `w_${agent}`, room: 'notes', content: `${agent} note ${i}: the trail survives a killed server` } });
          const out = result.structuredContent as { drawer_id?: string };
          if (result.isError !== true && out.drawer_id) acked.get(agent)!.push(out.drawer_id);
        } catch {
          return; // the server is gone
        }
      }
    });
    // Kill once every writer has had several writes acknowledged.
    while ([...acked.values()].some((ids) => ids.length < 5)) await new Promise((r) => setTimeout(r, 20));
    serve.kill('SIGKILL');
    killed = true;
    await Promise.all(writers);
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));

    const rt = await openRuntime(config());
    try {
      const records = (await rt.stores.audit.scan(0, 100_000)).filter((r) => r.op === 'drawers.upsert');
      for (const [agent, ids] of acked) {
        for (const id of ids) {
          const of = records.filter((r) => r.ids.includes(`drawer:${id}`));
          expect(of, `${agent} ${id}`).toHaveLength(1);
          expect(of[0]).toMatchObject({ identity: agent, transport: 'mcp-http', action: 'mempalace_add_drawer' });
        }
      }
      const ackedIds = new Set([...acked.values()].flat().map((id) => `drawer:${id}`));
      const unacked = records.filter((r) => !r.ids.some((id) => ackedIds.has(id)));
      // Write-ahead: a write in flight at the kill may have its record without its answer, one per writer at most.
      expect(unacked.length).toBeLessThanOrEqual(AGENTS.length);
      expect(await verifyAudit(rt.stores.audit)).toMatchObject({ ok: true });
    } finally {
      await rt.close();
    }

    // A restarted server appends to the same chain.
    const again = await startServe(palace, profileEnv, port);
    children.push(again);
    const alice = await client(port, 'alice');
    await alice.callTool({ name: 'mempalace_add_drawer', arguments: { wing: 'w_alice', room: 'notes', content: 'after the restart' } });
    await alice.close();
    await stopChild(again, 'SIGTERM');
    const rt2 = await openRuntime(config());
    try {
      const verification = await verifyAudit(rt2.stores.audit);
      expect(verification).toMatchObject({ ok: true });
      const last = (await rt2.stores.audit.scan(0, 100_000)).at(-1);
      expect(last).toMatchObject({ identity: 'alice', op: 'drawers.upsert' });
    } finally {
      await rt2.close();
    }
  }, 600_000);
});
