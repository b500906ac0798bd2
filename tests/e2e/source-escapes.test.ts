/**
 * Every way out of the allowed roots that the security issue found, tried as an attacker with a
 * write token would, through all three transports (MCP over HTTP, REST, the CLI as a child
 * process), on the embedded profile with MEMPALACE_ALLOWED_ROOTS set to one folder: each is
 * refused naming the field and the rule, no drawer ever holds the outside content, and a
 * loopback listener that the git URLs point at never receives a connection. Then the network
 * server's default (no roots = no local sources unless --allow-any-source) and per-token roots.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authenticator } from '../../api/auth.js';
import type { Caller } from '../../core/caller.js';
import type { ApiHarness } from './api-harness.js';
import { API_TOKENS, readSse, startApi } from './api-harness.js';
import { makeTempDir, removeDir } from '../helpers/tmp.js';
import { CLI_ARGS, ROOT, runCli } from '../helpers/cli.js';

const SECRET = 'OUTSIDE-SECRET-c41e';
const tmp = fs.realpathSync(makeTempDir('mempalace-escapes-'));
const allowed = path.join(tmp, 'allowed');
const outside = path.join(tmp, 'outside');
const prose = (topic: string) => `${topic}: the harbour master records every berth change in the ledger before noon.\n`.repeat(4);

let listener: net.Server;
let port = 0;
let connections = 0;
let h: ApiHarness;
let alice: Client;

interface Escape {
  name: string;
  source: string;
  ref?: string;
  mode?: 'convos';
  rule: string;
  /** mempalace_mine takes no ref: a URL is refused as not a directory, or resolved as one. */
  mcpRule: string;
}

function escapes(): Escape[] {
  return [
    { name: 'a directory symlink inside the root pointing outside', source: path.join(allowed, 'linkdir'), rule: 'symlink_outside_roots',
      mcpRule: 'symlink_outside_roots' },
    { name: 'a file symlink to a passwd file, mined as convos', source: path.join(allowed, 'passwd.txt'), mode: 'convos', rule: 'symlink_outside_roots',
      mcpRule: 'symlink_outside_roots' },
    { name: 'a path outside the root', source: path.join(outside, 'secrets'), rule: 'allowed_roots', mcpRule: 'allowed_roots' },
    { name: 'a file:// repository outside the root', source: `file://${path.join(outside, 'repo')}`, ref: 'main', rule: 'allowed_roots',
      mcpRule: 'allowed_roots' },
    { name: 'a local repository path outside the root', source: path.join(outside, 'repo'), ref: 'main', rule: 'allowed_roots', mcpRule: 'allowed_roots' },
    { name: 'plain http to a loopback listener', source: `http://127.0.0.1:${port}/x.git`, ref: 'main', rule: 'git_scheme', mcpRule: 'local_directory' },
    { name: 'https to a loopback address', source: `https://127.0.0.1:${port}/x.git`, ref: 'main', rule: 'git_private_address', mcpRule: 'local_directory' },
    { name: 'https to a name resolving to loopback', source: `https://localhost:${port}/x.git`, ref: 'main', rule: 'git_private_address',
      mcpRule: 'local_directory' },
    { name: 'an ext:: remote helper', source: 'ext::git-upload-pack', ref: 'main', rule: 'git_scheme', mcpRule: 'local_directory' },
  ];
}

async function drawerText(): Promise<string> {
  const page = await h.runtime.stores.drawers.list({}, 0, 10_000);
  return (await h.runtime.stores.drawers.get(page.items.map((d) => d.id))).map((d) => `${d.content}\n${JSON.stringify(d.meta)}`).join('\n');
}

beforeAll(async () => {
  fs.mkdirSync(path.join(allowed, 'project'), { recursive: true });
  fs.mkdirSync(path.join(allowed, 'other'), { recursive: true });
  fs.mkdirSync(path.join(outside, 'secrets'), { recursive: true });
  fs.writeFileSync(path.join(outside, 'secrets', 'passwd.txt'), `root:x:0:0:${SECRET}:/root:/bin/bash\n${prose(SECRET)}`);
  fs.writeFileSync(path.join(outside, 'secrets', 'notes.md'), prose(SECRET));
  fs.writeFileSync(path.join(allowed, 'project', 'berths.md'), prose('berths'));
  fs.writeFileSync(path.join(allowed, 'other', 'tides.md'), prose('tides'));
  fs.symlinkSync(path.join(outside, 'secrets'), path.join(allowed, 'linkdir'));
  fs.symlinkSync(path.join(outside, 'secrets', 'passwd.txt'), path.join(allowed, 'passwd.txt'));
  fs.symlinkSync(path.join(outside, 'secrets', 'notes.md'), path.join(allowed, 'project', 'leak.md'));
  const repo = path.join(outside, 'repo');
  fs.mkdirSync(repo);
  const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@example.invalid' };
  execFileSync('git', ['init', '--quiet', '--initial-branch=main'], { cwd: repo, env });
  fs.writeFileSync(path.join(repo, 'secret.md'), prose(SECRET));
  execFileSync('git', ['add', '.'], { cwd: repo, env });
  execFileSync('git', ['commit', '--quiet', '-m', 'secret'], { cwd: repo, env });

  listener = net.createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  port = (listener.address() as net.AddressInfo).port;

  const tokens: [string, Caller][] = [...API_TOKENS, ['tok-tenant', { identity: 'tenant', scopes: ['read', 'write'], roots: [path.join(allowed, 'project')] }]];
  h = await startApi({ env: { MEMPALACE_ALLOWED_ROOTS: allowed, MEMPALACE_GIT_ALLOWED_HOSTS: `*,*:${port}` }, auth: Authenticator.fromTokens(tokens) });
  alice = await h.mcpClient('tok-alice');
});

afterAll(async () => {
  await h?.close();
  listener?.close();
  removeDir(tmp);
});

describe('every escape is refused through every transport', () => {
  it('MCP: mempalace_mine refuses each, naming the field and the rule', async () => {
    for (const e of escapes()) {
      const result = await alice.callTool({ name: 'mempalace_mine', arguments: { source: e.source, agent: 'alice', ...(e.mode ? { mode: e.mode } : {}) } });
      expect(result.structuredContent, e.name).toMatchObject({ success: false, field: 'source', rule: e.mcpRule });
    }
    expect((await h.runtime.jobs.list(100)).length).toBe(0);
  });

  it('REST: POST /v1/jobs/mine answers 400 for each, naming the field and the rule, and starts nothing', async () => {
    for (const e of escapes()) {
      const res = await h.call('/v1/jobs/mine', { token: 'tok-alice',
        body: { source: e.source, ...(e.ref ? { ref: e.ref } : {}), ...(e.mode ? { mode: e.mode } : {}) } });
      expect(res.status, e.name).toBe(400);
      expect(await res.json(), e.name).toMatchObject({ code: 'invalid_argument', field: 'source', rule: e.rule });
    }
    expect((await h.runtime.jobs.list(100)).length).toBe(0);
  });

  it('CLI: mempalace mine exits 2 for each with the field and the rule, and files nothing', () => {
    const palace = path.join(tmp, 'cli-palace');
    for (const e of escapes()) {
      const args = ['--palace', palace, '--json', 'mine', e.source, ...(e.ref ? ['--ref', e.ref] : []), ...(e.mode ? ['--mode', e.mode] : [])];
      const res = runCli(args, { timeoutMs: 120_000,
        env: { MEMPALACE_PROFILE: 'embedded', MEMPALACE_ALLOWED_ROOTS: allowed, MEMPALACE_GIT_ALLOWED_HOSTS: `*,*:${port}` } });
      expect(res.code, `${e.name}: ${res.stderr}`).toBe(2);
      expect(JSON.parse(res.stdout), e.name).toMatchObject({ code: 'invalid_argument', field: 'source', rule: e.rule });
    }
    expect(fs.existsSync(palace)).toBe(false);
  });

  it('the loopback listener received no connection and no drawer holds outside content', async () => {
    expect(connections).toBe(0);
    expect(await drawerText()).not.toContain(SECRET);
  });
});

describe('inside the root', () => {
  it('a mine of a directory holding a symlink to outside files the rest and records why the link was skipped', async () => {
    const res = await h.call('/v1/jobs/mine', { token: 'tok-alice', body: { source: path.join(allowed, 'project'), wing: 'inside' } });
    expect(res.status).toBe(202);
    const { job_id: job } = (await res.json()) as { job_id: string };
    const frames = await readSse(await h.call(`/v1/jobs/${job}/events`, { token: 'tok-alice' }), (f) => f.some((x) => x.event === 'end'), 120_000);
    expect(JSON.parse(frames.find((f) => f.event === 'end')!.data)).toMatchObject({ state: 'completed', files_mined: 1, files_skipped: 1 });
    const states = await h.runtime.stores.drawers.fileStates('inside', [path.join(allowed, 'project', 'leak.md')]);
    expect(states.get(path.join(allowed, 'project', 'leak.md'))?.extra?.skip_reason).toBe('symlink_outside_roots');
    expect(await drawerText()).not.toContain(SECRET);
    expect(await drawerText()).toContain('berths');
  });

  it('a token with roots is bounded by them on REST and MCP, for mine, sync and delete_by_source', async () => {
    const other = path.join(allowed, 'other');
    const mine = await h.call('/v1/jobs/mine', { token: 'tok-tenant', body: { source: other } });
    expect(mine.status).toBe(400);
    expect(await mine.json()).toMatchObject({ field: 'source', rule: 'token_roots' });
    const sync = await h.call('/v1/jobs/sync', { token: 'tok-tenant', body: { project_dir: other } });
    expect(await sync.json()).toMatchObject({ field: 'project_dir', rule: 'token_roots' });
    const del = await h.call('/v1/jobs/delete_by_source', { token: 'tok-tenant',
      body: { source_file: path.join(allowed, 'project', 'berths.md').replace('project', 'other'), dry_run: false } });
    expect(await del.json()).toMatchObject({ field: 'source_file', rule: 'token_roots' });
    const tenant = await h.mcpClient('tok-tenant');
    const viaMcp = await tenant.callTool({ name: 'mempalace_mine', arguments: { source: other } });
    expect(viaMcp.structuredContent).toMatchObject({ success: false, field: 'source', rule: 'token_roots' });
    // Inside its roots the same token mines.
    const ok = await h.call('/v1/jobs/mine', { token: 'tok-tenant', body: { source: path.join(allowed, 'project'), wing: 'tenant' } });
    expect(ok.status).toBe(202);
    await h.runtime.jobs.wait(((await ok.json()) as { job_id: string }).job_id, 120_000);
  });
});

describe('mempalace serve without MEMPALACE_ALLOWED_ROOTS', () => {
  async function serve(extra: string[]): Promise<{ url: string; stop(): Promise<void> }> {
    const palace = makeTempDir('mempalace-escapes-serve-');
    const env: NodeJS.ProcessEnv = { ...process.env, MEMPALACE_PROFILE: 'embedded' };
    delete env.MEMPALACE_ALLOWED_ROOTS;
    delete env.MEMPALACE_TOKENS_FILE;
    delete env.MEMPALACE_API_TOKENS;
    delete env.MEMPALACE_MCP_HTTP_TOKEN;
    const child = spawn(process.execPath, [...CLI_ARGS, '--palace', palace, 'serve', '--port', '0', ...extra], { cwd: ROOT, env,
      stdio: ['ignore', 'ignore', 'pipe'] });
    const url = await new Promise<string>((resolve, reject) => {
      let err = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        err += d;
        const m = /mempalace serve: (http:\/\/[^\s]+)/.exec(err);
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
    });
    return {
      url,
      async stop() {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
        removeDir(palace);
      },
    };
  }

  const mineAt = (url: string) =>
    fetch(`${url}/v1/jobs/mine`, { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ source: path.join(allowed, 'project'), dry_run: true }) });

  it('refuses local sources by default, and accepts them with --allow-any-source', async () => {
    const strict = await serve([]);
    try {
      const res = await mineAt(strict.url);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'invalid_argument', field: 'source', rule: 'local_sources_disabled' });
    } finally {
      await strict.stop();
    }
    const open = await serve(['--allow-any-source']);
    try {
      expect((await mineAt(open.url)).status).toBe(202);
    } finally {
      await open.stop();
    }
  });
});
