/**
 * The job activities keep to the source policy on their own (they run on workers that may see
 * another filesystem than the entry point): a file swapped for a symlink, or a directory swapped
 * for one, between the scan and the batch is refused and recorded; a symlink met by the scan is
 * recorded with why it was skipped; bounds carried in the spec are checked again; git runs only
 * through the hardened runner (protocol allow-list, size cap, timeout), against real repositories
 * and a real TCP listener.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hardenedGit, runGit } from '../../jobs/source/git.js';
import { GitWorkspace } from '../../jobs/source/git-workspace.js';
import { createJobActivities } from '../../jobs/activities.js';
import type { JobActivities } from '../../jobs/activities.js';
import { resolveSource } from '../../jobs/source/resolve.js';
import type { Runtime } from '../../palace/runtime.js';
import { openRuntime } from '../../app/runtime.js';
import { loadConfig } from '../../app/config.js';
import type { MineSpec } from '../../jobs/job.js';
import { sourcePolicy } from '../../palace/sources/sources.js';
import { makeTempDir, removeDir } from '../helpers/tmp.js';
import { dirMineSpec } from '../helpers/mine-spec.js';

const SECRET = 'OUTSIDE-SECRET-7f3a';
const tmp = fs.realpathSync(makeTempDir('mempalace-source-safety-'));
const allowed = path.join(tmp, 'allowed');
const outside = path.join(tmp, 'outside');
const prose = (topic: string) => `${topic}: the harbour master records every berth change in the ledger before noon.\n`.repeat(4);

let rt: Runtime;
let acts: JobActivities;

const spec = (source: string, wing: string, over: Partial<MineSpec> = {}): MineSpec => dirMineSpec(source, wing, 'tester', over);

async function allContent(): Promise<string> {
  const page = await rt.stores.drawers.list({}, 0, 10_000);
  const full = await rt.stores.drawers.get(page.items.map((d) => d.id));
  return full.map((d) => d.content).join('\n');
}

beforeAll(async () => {
  fs.mkdirSync(allowed, { recursive: true });
  fs.mkdirSync(path.join(outside, 'sub'), { recursive: true });
  fs.writeFileSync(path.join(outside, 'passwd.md'), `${SECRET} ${prose('outside')}`);
  fs.writeFileSync(path.join(outside, 'sub', 'c.md'), `${SECRET} ${prose('outside sub')}`);
  const config = loadConfig({ ...process.env, MEMPALACE_PALACE: path.join(tmp, 'palace'), MEMPALACE_ALLOWED_ROOTS: allowed });
  rt = await openRuntime(config);
  acts = createJobActivities({ config, stores: rt.stores, embedder: rt.embedder, workspace: path.join(tmp, 'workspace') });
});

afterAll(async () => {
  await rt?.close();
  removeDir(tmp);
});

describe('between scan and batch', () => {
  it('a file swapped for a symlink, and a directory swapped for one, are refused and recorded; the rest is mined', async () => {
    const project = path.join(allowed, 'swap');
    fs.mkdirSync(path.join(project, 'sub'), { recursive: true });
    fs.writeFileSync(path.join(project, 'a.md'), prose('a'));
    fs.writeFileSync(path.join(project, 'b.md'), prose('b'));
    fs.writeFileSync(path.join(project, 'sub', 'c.md'), prose('c'));
    const s = spec(project, 'swap');
    const scan = await acts.scanSource({ jobId: 'job-swap', spec: s });
    expect(scan.totalFiles).toBe(3);

    fs.rmSync(path.join(project, 'b.md'));
    fs.symlinkSync(path.join(outside, 'passwd.md'), path.join(project, 'b.md'));
    fs.rmSync(path.join(project, 'sub'), { recursive: true });
    fs.symlinkSync(path.join(outside, 'sub'), path.join(project, 'sub'));

    const batch = await acts.mineBatch({ jobId: 'job-swap', spec: s, scan, offset: 0, count: scan.totalFiles });
    expect(batch.files_mined).toBe(1);
    expect(batch.files_skipped).toBe(2);
    expect(batch.skipsDetail.map((d) => d.file).sort()).toEqual(['b.md', 'sub/c.md']);
    for (const d of batch.skipsDetail) expect(d.reason).toMatch(/^symlink: /);
    const states = await rt.stores.drawers.fileStates('swap', [path.join(project, 'b.md'), path.join(project, 'sub', 'c.md')]);
    expect([...states.values()].map((st) => st.extra?.skip_reason)).toEqual(['symlink', 'symlink']);
    expect(await allContent()).not.toContain(SECRET);
  });

  it('a symlink met by the scan is never followed; one leading outside the roots is recorded as such', async () => {
    const project = path.join(allowed, 'links');
    fs.mkdirSync(project, { recursive: true });
    fs.writeFileSync(path.join(project, 'real.md'), prose('real'));
    fs.symlinkSync(path.join(outside, 'passwd.md'), path.join(project, 'passwd.md'));
    fs.symlinkSync(path.join(project, 'real.md'), path.join(project, 'alias.md'));
    const s = spec(project, 'links');
    const scan = await acts.scanSource({ jobId: 'job-links', spec: s });
    const batch = await acts.mineBatch({ jobId: 'job-links', spec: s, scan, offset: 0, count: scan.totalFiles });
    expect(batch.files_mined).toBe(1);
    const states = await rt.stores.drawers.fileStates('links', [path.join(project, 'passwd.md'), path.join(project, 'alias.md')]);
    expect(states.get(path.join(project, 'passwd.md'))?.extra?.skip_reason).toBe('symlink_outside_roots');
    expect(states.get(path.join(project, 'alias.md'))?.extra?.skip_reason).toBe('symlink');
    expect(await allContent()).not.toContain(SECRET);
  });
});

describe('the worker checks again', () => {
  it('refuses a source outside the bounds carried in the spec, and a source that became a link outside', async () => {
    const a = path.join(allowed, 'tenant-a');
    const b = path.join(allowed, 'tenant-b');
    fs.mkdirSync(a, { recursive: true });
    fs.mkdirSync(b, { recursive: true });
    fs.writeFileSync(path.join(b, 'n.md'), prose('b'));
    const carried = spec(b, 'carried', { sourceBounds: [{ rule: 'token_roots', roots: [a] }] });
    await expect(acts.scanSource({ jobId: 'job-carried', spec: carried })).rejects.toMatchObject({ code: 'invalid_argument', field: 'source',
      rule: 'token_roots' });

    // Accepted at the entry point, then swapped for a link to the outside before the worker ran.
    fs.rmSync(b, { recursive: true });
    fs.symlinkSync(outside, b);
    await expect(acts.scanSource({ jobId: 'job-relinked', spec: spec(b, 'relinked') })).rejects.toMatchObject({ field: 'source',
      rule: 'symlink_outside_roots' });
    expect(await allContent()).not.toContain(SECRET);
  });
});

describe('git through the hardened runner', () => {
  const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@example.invalid' };
  const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', env }).trim();
  const limits = { timeoutMs: 60_000, maxBytes: 64 * 1024 * 1024 };
  let repo: string;
  let head: string;

  beforeAll(() => {
    repo = path.join(allowed, 'repo');
    fs.mkdirSync(repo);
    git(repo, 'init', '--quiet', '--initial-branch=main');
    fs.writeFileSync(path.join(repo, 'notes.md'), prose('git'));
    // Incompressible bytes, so the size cap has something to cap.
    fs.writeFileSync(path.join(repo, 'blob.txt'), Buffer.from(Array.from({ length: 3 * 1024 * 1024 }, (_, i) => 97 + ((i * 2654435761) >>> 27) % 26)));
    git(repo, 'add', '.');
    git(repo, 'commit', '--quiet', '-m', 'first');
    head = git(repo, 'rev-parse', 'HEAD');
  });

  it('clones a local repository inside the roots at its canonical file URL and records the commit', async () => {
    const policy = sourcePolicy(rt.config);
    const resolved = await resolveSource({ kind: 'git', url: repo, ref: 'main' }, { policy,
      workspace: new GitWorkspace(path.join(tmp, 'ws-ok'), 1 << 30, hardenedGit(limits)) });
    expect(resolved.commit).toBe(head);
    expect(fs.readFileSync(path.join(resolved.root, 'notes.md'), 'utf8')).toBe(prose('git'));
  });

  it('stops a clone that grows past the size cap and removes it', async () => {
    const policy = sourcePolicy(rt.config);
    const workspace = path.join(tmp, 'ws-cap');
    await expect(
      resolveSource({ kind: 'git', url: repo, ref: 'main' }, { policy,
        workspace: new GitWorkspace(workspace, 1 << 30, hardenedGit({ ...limits, maxBytes: 256 * 1024 })) }),
    )
      .rejects.toMatchObject({ code: 'invalid_argument', field: 'source', rule: 'git_max_bytes' });
    // Neither the repository the fetch grew nor a checkout is kept.
    expect(fs.readdirSync(path.join(workspace, 'repos'))).toEqual([]);
    expect(fs.readdirSync(path.join(workspace, 'checkouts'))).toEqual([]);
  });

  it('git refuses any transport but the approved one', async () => {
    const target = { transport: 'https' as const, url: `file://${repo}`, host: 'example.invalid', port: 443, addresses: ['192.0.2.1'] };
    await expect(runGit({ args: ['ls-remote', '--', `file://${repo}`], target, limits })).rejects.toMatchObject({ rule: 'git',
      message: expect.stringMatching(/transport 'file' not allowed/) });
    const file = { transport: 'file' as const, url: `file://${repo}`, path: repo };
    expect(await runGit({ args: ['ls-remote', '--', `file://${repo}`, 'refs/heads/main'], target: file, limits })).toContain(head);
  });

  it('kills a fetch that outlives the timeout (a listener that never answers, listed exactly)', async () => {
    let connections = 0;
    const stall = net.createServer((socket) => {
      connections += 1;
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => stall.listen(0, '127.0.0.1', resolve));
    const port = (stall.address() as net.AddressInfo).port;
    try {
      const policy = sourcePolicy({ ...rt.config, sources: { ...rt.config.sources, gitAllowedHosts: [`127.0.0.1:${port}`] } });
      await expect(
        resolveSource({ kind: 'git', url: `https://127.0.0.1:${port}/x.git`, ref: 'main' }, { policy,
          workspace: new GitWorkspace(path.join(tmp, 'ws-timeout'), 1 << 30, hardenedGit({ ...limits, timeoutMs: 1500 })) }),
      )
        .rejects.toMatchObject({ field: 'source', rule: 'git_timeout' });
      expect(connections).toBeGreaterThan(0);
    } finally {
      stall.close();
    }
  });
});
