/**
 * The MCP server's gates and team features with the real runtime: the two-agent handoff loop,
 * identity rules for HTTP tokens, read-only mode (stdio via the environment, HTTP via the
 * option), the stale-library gate on a package.json changed under a running server, client
 * roots as the source boundary, a long mine answered as `running` and polled, the idle exit and
 * the write-stall watchdog, and the Host/Origin and bearer-token checks of the HTTP route.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Harness } from './mcp-harness.js';
import { ROOT, call, learnSchemas, makeProject, rpcError, snapshot, startHttp, startStdio, tempDir } from './mcp-harness.js';
import { capturedLogger } from '../helpers/log.js';

const R = `add_drawer checkpoint delete_drawer mine delete_by_source sync update_drawer kg_add kg_invalidate kg_supersede
create_tunnel delete_tunnel delete_hallway diary_write task_create event_append event_ack artifact_put patch_submit
hook_settings memories_filed_away`.split(/\s+/).map((n) => `mempalace_${n}`);

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('two agents over HTTP, each with its own token', () => {
  it('hand off a task: task_create → event_wait → patch_submit → artifact_get (sha256) → event_ack', async () => {
    h = await startHttp();
    const alice = await h.connect('tok-alice');
    const bob = await h.connect('tok-bob');
    await learnSchemas(alice);

    // Bob is already waiting for work when Alice files the task.
    const bobWaits = call(bob, 'mempalace_event_wait', { to_agent: 'bob', type: 'task.request', timeout_ms: 30_000 });
    await new Promise((r) => setTimeout(r, 300));
    const created = await call(alice, 'mempalace_task_create', {
      project: 'Shop',
      from_agent: 'alice',
      to_agent: 'bob',
      goal: 'Make checkout reject expired cards',
      branch: 'fix/expired-cards',
      base_commit: '9f2c4e1',
      done: 'checkout test for an expired card passes',
    });
    const task = created.task as { id: string; correlation_id: string; stream: string };
    const inbox = await bobWaits;
    expect(inbox).toMatchObject({ timed_out: false, count: 1 });
    expect((inbox.events as { id: string }[])[0]!.id).toBe(task.id);

    const diff =
      'diff --git a/checkout.py b/checkout.py\n--- a/checkout.py\n+++ b/checkout.py\n@@ -1 +1,2 @@\n def pay(card):\n+    if card.expired: raise ValueError("expired")\n';
    const aliceWaits = call(alice, 'mempalace_event_wait', { correlation_id: task.correlation_id, type: 'patch.ready', timeout_ms: 30_000 });
    const submitted = await call(bob, 'mempalace_patch_submit', { content: diff, from_agent: 'bob', to_agent: 'alice', stream: task.stream,
      correlation_id: task.correlation_id, base_commit: '9f2c4e1' });
    expect(submitted.success).toBe(true);
    const ready = await aliceWaits;
    const readyEvent = (ready.events as { id: string; artifact_ids: string[]; from_agent: string }[])[0]!;
    expect(readyEvent.from_agent).toBe('bob');
    const fetched = (await call(alice, 'mempalace_artifact_get', { artifact_id: readyEvent.artifact_ids[0] })).artifact as { content: string; sha256: string;
      size_bytes: number };
    expect(fetched.content).toBe(diff);
    expect(sha256(fetched.content)).toBe(fetched.sha256);
    expect(fetched.size_bytes).toBe(Buffer.byteLength(diff, 'utf8'));

    const acked = await call(alice, 'mempalace_event_ack', { event_id: readyEvent.id, from_agent: 'alice', status: 'applied', body: 'merged' });
    expect(acked.event).toMatchObject({ type: 'event.ack', to_agent: 'bob', correlation_id: task.correlation_id, status: 'applied' });
    const bobInbox = await call(bob, 'mempalace_event_list', { to_agent: 'bob', type: 'event.ack' });
    expect((bobInbox.events as { metadata: { ack_of: string } }[]).map((e) => e.metadata.ack_of)).toEqual([readyEvent.id]);
  });

  it('refuse a write naming another agent unless the token is admin, and write nothing', async () => {
    h = await startHttp();
    const bob = await h.connect('tok-bob');
    const reader = await h.connect('tok-reader');
    await learnSchemas(bob);
    const before = await snapshot(h.client);
    const forged = await call(bob, 'mempalace_event_append', { type: 'task.reply', stream: 's', room: 'r', from_agent: 'alice', body: 'not me' });
    expect(forged).toEqual({ success: false, error: "from_agent must be this token's identity 'bob' (an admin token may write for others)" });
    expect((await call(bob, 'mempalace_add_drawer', { wing: 'w', room: 'r', content: 'c', added_by: 'alice' })).error).toContain('added_by');
    expect((await call(bob, 'mempalace_diary_write', { agent_name: 'alice', entry: 'x' })).error).toContain('agent_name');
    expect((await call(bob, 'mempalace_artifact_put', { kind: 'note', content: 'x', created_by: 'alice' })).error).toContain('created_by');
    expect((await call(bob, 'mempalace_checkpoint', { items: [], diary: { agent_name: 'alice', entry: 'x' } })).error).toContain('diary.agent_name');
    expect((await call(reader, 'mempalace_add_drawer', { wing: 'w', room: 'r', content: 'c' })).error).toContain('no write scope');
    expect(await snapshot(h.client)).toEqual(before);

    // Bob may write as himself (any case), and an unnamed writer is recorded as the token's identity.
    expect((await call(bob, 'mempalace_event_append', { type: 'task.reply', stream: 's', room: 'r', from_agent: 'Bob' })).success).toBe(true);
    const added = await call(bob, 'mempalace_add_drawer', { wing: 'w', room: 'r', content: 'written by the token' });
    expect(((await call(bob, 'mempalace_get_drawer', { drawer_id: added.drawer_id })).metadata as { added_by: string }).added_by).toBe('bob');
    // The admin token may write for anyone.
    expect((await call(h.client, 'mempalace_event_append', { type: 'task.reply', stream: 's', room: 'r', from_agent: 'alice' })).success).toBe(true);
  });
});

describe('read-only mode', () => {
  const check = async (client: Client) => {
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toHaveLength(24);
    expect(names.filter((n) => R.includes(n))).toEqual([]);
    expect(names).toContain('mempalace_reconnect');
    await learnSchemas(client);
    for (const name of R) {
      const e = await rpcError(client, name, {}, -32003);
      expect(e.message).toContain('Server is in read-only mode; this tool is disabled');
      expect(e.data).toEqual({ tool: name });
    }
    expect((await call(client, 'mempalace_search', { query: 'anything' })).results).toEqual([]);
    expect((await call(client, 'mempalace_reconnect')).success).toBe(true);
  };

  it('hides and refuses exactly the 21 R tools over stdio (MEMPALACE_MCP_READ_ONLY=1)', async () => {
    h = await startStdio({ env: { MEMPALACE_MCP_READ_ONLY: '1' } });
    await check(h.client);
    expect(fs.existsSync(path.join(h.home, 'config.json'))).toBe(false);
  });

  it('hides and refuses exactly the 21 R tools over HTTP (the option)', async () => {
    h = await startHttp({ server: { readOnly: true } });
    await check(h.client);
  });
});

describe('stale-library gate', () => {
  it('refuses mutating tools with -32005 once the watched package.json changes under the running server', async () => {
    const install = tempDir('install');
    const pkg = path.join(install, 'package.json');
    fs.copyFileSync(path.join(ROOT, 'package.json'), pkg);
    const serving = JSON.parse(fs.readFileSync(pkg, 'utf8')).version as string;
    h = await startHttp({ server: { watchedPackages: [{ name: 'mempalace', packageJson: pkg }] } });
    const c = h.client;
    await learnSchemas(c);
    expect((await call(c, 'mempalace_add_drawer', { wing: 'w', room: 'r', content: 'before the upgrade' })).success).toBe(true);

    fs.writeFileSync(pkg, JSON.stringify({ ...JSON.parse(fs.readFileSync(pkg, 'utf8')), version: '99.0.0' }, null, 2));
    const before = await snapshot(c);
    const e = await rpcError(c, 'mempalace_add_drawer', { wing: 'w', room: 'r', content: 'after the upgrade' }, -32005);
    expect(e.message).toContain(`Server is running a library version that is no longer installed (mempalace ${serving} -> 99.0.0`);
    expect(e.data).toMatchObject({ tool: 'mempalace_add_drawer', packages: [{ package: 'mempalace', serving, installed: '99.0.0' }],
      action_required: 'restart_mcp_server', override_env: 'MEMPALACE_MCP_ALLOW_STALE_LIBRARY' });
    await rpcError(c, 'mempalace_kg_add', { subject: 'a', predicate: 'b', object: 'c' }, -32005);
    await rpcError(c, 'mempalace_event_append', { type: 'x', stream: 's', room: 'r', from_agent: 'ops' }, -32005);
    // Reads and non-mutating tools keep working; status reports the drift.
    expect((await call(c, 'mempalace_search', { query: 'upgrade' })).results).toHaveLength(1);
    expect((await call(c, 'mempalace_hook_settings')).success).toBe(true);
    expect((await call(c, 'mempalace_status')).library_versions).toEqual({ stale: true, serving: { mempalace: serving },
      packages: [{ package: 'mempalace', serving, installed: '99.0.0' }] });
    expect(await snapshot(c)).toEqual(before);

    // Nothing latches: rolling back clears the condition. A removed package reads "not installed".
    fs.writeFileSync(pkg, JSON.stringify({ ...JSON.parse(fs.readFileSync(pkg, 'utf8')), version: serving }, null, 2));
    expect((await call(c, 'mempalace_add_drawer', { wing: 'w', room: 'r', content: 'after the rollback' })).success).toBe(true);
    fs.rmSync(pkg);
    expect((await rpcError(c, 'mempalace_diary_write', { agent_name: 'ops', entry: 'x' }, -32005)).message).toContain(`mempalace ${serving} -> not installed`);
  });

  it('MEMPALACE_MCP_ALLOW_STALE_LIBRARY lets writes through and status names the override', async () => {
    const install = tempDir('install');
    const pkg = path.join(install, 'package.json');
    fs.writeFileSync(pkg, JSON.stringify({ name: 'mempalace', version: '1.0.0' }));
    h = await startHttp({ env: { MEMPALACE_MCP_ALLOW_STALE_LIBRARY: 'yes' }, server: { watchedPackages: [{ name: 'mempalace', packageJson: pkg }] } });
    await learnSchemas(h.client);
    fs.writeFileSync(pkg, JSON.stringify({ name: 'mempalace', version: '1.0.1' }));
    expect((await call(h.client, 'mempalace_add_drawer', { wing: 'w', room: 'r', content: 'allowed' })).success).toBe(true);
    expect((await call(h.client, 'mempalace_status')).library_versions).toMatchObject({ stale: true, gate_disabled_by: 'MEMPALACE_MCP_ALLOW_STALE_LIBRARY' });
  });
});

describe('long-running tools', () => {
  it('answer "running" with a job id when the wait elapses; a repeat call returns already-running with the same job id; the job is a resource', async () => {
    h = await startHttp({ env: { MEMPALACE_MCP_JOB_WAIT_S: '0' } });
    const c = h.client;
    await learnSchemas(c);
    const project = makeProject(400);
    const first = await call(c, 'mempalace_mine', { source: project });
    expect(first).toMatchObject({ success: true, status: 'running' });
    const jobId = first.job_id as string;
    const again = await call(c, 'mempalace_mine', { source: project });
    expect(again).toMatchObject({ success: false, error_class: 'LockHeldByOtherProcess', job_id: jobId });
    expect(again.error).toContain('another mine is in progress');
    expect((again.progress as { job_id: string; state: string }).job_id).toBe(jobId);
    let job: { state: string; files_seen: number; result?: { success: boolean } };
    do {
      await new Promise((r) => setTimeout(r, 500));
      job = JSON.parse(((await c.readResource({ uri: `mempalace://job/${jobId}` })).contents[0] as { text: string }).text);
    } while (job.state === 'running');
    expect(job.state).toBe('completed');
    expect(job.files_seen).toBe(400);
    expect(job.result?.success).toBe(true);
  }, 300_000);
});

describe('operational timers (docs/tools.md §11.6)', () => {
  it('a stdio server exits by itself after MEMPALACE_MCP_IDLE_HOURS without a request', async () => {
    const idleMs = 0.0005 * 3_600_000;
    h = await startStdio({ env: { MEMPALACE_MCP_IDLE_HOURS: '0.0005' } });
    const closed = new Promise<number>((resolve) => {
      h!.client.onclose = () => resolve(Date.now());
    });
    await learnSchemas(h.client);
    await new Promise((r) => setTimeout(r, idleMs / 2));
    await call(h.client, 'mempalace_status');
    const lastRequest = Date.now();
    const closedAt = await closed;
    expect(closedAt - lastRequest).toBeGreaterThanOrEqual(idleMs - 50);
  }, 60_000);

  it('warns about a vector write that has not returned, and calls the stall exit once it passes the exit bound; reads are not watched', async () => {
    const lines: string[] = [];
    const stalls: string[] = [];
    // Bounds of 1 ms: a real add_drawer (embedding + SQLite + ANN write) always outlasts them.
    h = await startHttp({
      env: { MEMPALACE_MCP_WRITE_STALL_WARN_SECS: '0.001', MEMPALACE_MCP_WRITE_STALL_EXIT_SECS: '0.001' },
      server: { log: capturedLogger('trace', (r) => lines.push(r.msg)).log, onWriteStall: () => stalls.push('stall') },
    });
    await learnSchemas(h.client);
    await call(h.client, 'mempalace_search', { query: 'nothing filed yet' });
    expect(lines.filter((l) => l.includes('has not returned'))).toEqual([]);
    expect(await call(h.client, 'mempalace_add_drawer', { wing: 'ops', room: 'notes', content: 'The watchdog only watches writes into the vector index.' }))
      .toMatchObject({ success: true });
    expect(lines.some((l) => /mempalace_add_drawer has not returned after 0.001 s \(write stall\?\)/.test(l))).toBe(true);
    expect(lines.some((l) => /mempalace_add_drawer has not returned after 0.001 s \(MEMPALACE_MCP_WRITE_STALL_EXIT_SECS\); exiting with code 75/.test(l))).toBe(
      true,
    );
    expect(stalls).toEqual(['stall']);
  });
});

describe('client roots', () => {
  const clients: Client[] = [];
  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
  });

  it('bound mine and sync sources to the roots a stdio client offers', async () => {
    const allowed = makeProject(2);
    const outside = makeProject(2);
    const palaceDir = tempDir('palace');
    const client = new Client({ name: 'roots-client', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } });
    client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: pathToFileURL(allowed).href, name: 'project' }] }));
    await client.connect(new StdioClientTransport({
      command: process.execPath,
      args: [path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), path.join(ROOT, 'tests', 'fixtures', 'mcp-stdio-server.ts')],
      env: { ...process.env, MEMPALACE_PALACE: palaceDir, MEMPALACE_TEST_HOME: tempDir('home') } as Record<string, string>,
      cwd: ROOT,
      stderr: 'ignore',
    }));
    clients.push(client);
    await learnSchemas(client);
    const refused = await call(client, 'mempalace_mine', { source: outside });
    expect(refused).toMatchObject({ success: false, field: 'source', rule: 'client_roots' });
    expect(refused.error).toContain("outside the MCP client's roots");
    expect(await call(client, 'mempalace_sync', { project_dir: outside })).toMatchObject({ success: false, field: 'project_dir', rule: 'client_roots' });
    expect((await call(client, 'mempalace_status')).total_drawers).toBe(0);
    expect(await call(client, 'mempalace_mine', { source: allowed })).toMatchObject({ success: true });
  });
});

describe('HTTP route checks', () => {
  it('rejects foreign Host and Origin headers, missing tokens and GET', async () => {
    h = await startHttp();
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer tok-admin' };
    const url = h.url!;
    expect((await fetch(url, { method: 'POST', body, headers: { ...headers, origin: 'http://evil.example' } })).status).toBe(403);
    // fetch may not override Host, so this one goes through node:http.
    const hostStatus = await new Promise<number>((resolve, reject) => {
      const req = http.request(url, { method: 'POST', headers: { ...headers, host: 'evil.example' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end(body);
    });
    expect(hostStatus).toBe(403);
    const anonymous = await fetch(url, { method: 'POST', body,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');
    expect((await fetch(url, { method: 'POST', body, headers: { ...headers, authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await fetch(url, { method: 'GET', headers })).status).toBe(405);
    const bad = await fetch(url, { method: 'POST', body: '{not json', headers });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: number } }).error.code).toBe(-32700);
    const ok = await fetch(url, { method: 'POST', body, headers: { ...headers, origin: `http://127.0.0.1:${new URL(url).port}` } });
    expect(ok.status).toBe(200);
  });
});
