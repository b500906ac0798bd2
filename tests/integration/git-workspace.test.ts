/**
 * The git workspace on real repositories (git over file://): one shallow fetch and one checkout
 * per commit, reused by every later call and by another workspace over the same directory (a
 * second process); least recently used checkouts evicted past the size cap, never one in use;
 * and a 200-file mine of a git source (four batches, two in flight) that checks the commit out
 * exactly once.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hardenedGit } from '../../jobs/source/git.js';
import type { GitRunnerFactory } from '../../jobs/source/git-workspace.js';
import { GitWorkspace } from '../../jobs/source/git-workspace.js';
import type { GitTarget } from '../../palace/sources/sources.js';
import { createJobActivities } from '../../jobs/activities.js';
import { loadConfig } from '../../app/config.js';
import { MiniLmEmbedder } from '../../embed/minilm.js';
import { openStores } from '../../stores/open.js';
import { LocalJobEngine } from '../../jobs/engines/local/runner.js';
import type { JobProgress, JobSpec } from '../../jobs/job.js';

let tmp: string;
let url: string;
let target: GitTarget;
let commits: string[];

const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.invalid' };
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', env: gitEnv }).trim();

const git60s = hardenedGit({ timeoutMs: 60_000, maxBytes: 1 << 30 });

/** The hardened runners, counting each subcommand. */
function counting(): { runner: GitRunnerFactory; counts: Map<string, number> } {
  const counts = new Map<string, number>();
  const runner: GitRunnerFactory = (t) => (args, cwd, capDir) => {
    const at = args.findIndex((a) => !a.startsWith('-') && !a.includes('='));
    const sub = args[at] === 'worktree' ? `worktree ${args[at + 1]}` : (args[at] ?? '');
    counts.set(sub, (counts.get(sub) ?? 0) + 1);
    return git60s(t)(args, cwd, capDir);
  };
  return { runner, counts };
}

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mempalace-git-ws-'));
  const bare = path.join(tmp, 'repo.git');
  const work = path.join(tmp, 'work');
  await fs.mkdir(bare);
  git(bare, 'init', '--quiet', '--bare', '--initial-branch=main');
  git(tmp, 'clone', '--quiet', bare, work);
  commits = [];
  // Three commits; the last one holds 200 notes (a four-batch mine).
  for (let c = 0; c < 3; c++) {
    const files = c === 2 ? 200 : 20;
    for (let i = 0; i < files; i++) {
      await fs.mkdir(path.join(work, `dir${i % 5}`), { recursive: true });
      await fs.writeFile(path.join(work, `dir${i % 5}`, `note${i}.md`),
        `Commit ${c}, note ${i}: the worker reuses one checkout of this commit for every batch it mines.\n`);
    }
    git(work, 'add', '.');
    git(work, 'commit', '--quiet', '-m', `commit ${c}`);
    commits.push(git(work, 'rev-parse', 'HEAD'));
  }
  git(work, 'tag', '-a', 'v1', '-m', 'v1', commits[0]!);
  git(work, 'push', '--quiet', '--tags', 'origin', 'main');
  url = `file://${bare}`;
  target = { transport: 'file', url, path: bare };
});

afterAll(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('git workspace', () => {
  it('fetches a commit once, shallowly, and reuses its checkout for every later call', async () => {
    const { runner, counts } = counting();
    const ws = new GitWorkspace(path.join(tmp, 'ws-reuse'), 1 << 30, runner);
    const first = await ws.checkout(target, 'main');
    expect(first.commit).toBe(commits[2]);
    for (let batch = 0; batch < 10; batch++) expect(await ws.ensure(target, first.commit)).toEqual(first);
    expect(ws.checkoutsMade).toBe(1);
    expect(counts.get('fetch')).toBe(1);
    expect(counts.get('worktree add')).toBe(1);
    expect(await fs.readFile(path.join(first.dir, 'dir0', 'note5.md'), 'utf8')).toContain('Commit 2, note 5');
    const repo = path.join(tmp, 'ws-reuse', 'repos', (await fs.readdir(path.join(tmp, 'ws-reuse', 'repos')))[0]!);
    expect(git(repo, 'rev-parse', '--is-shallow-repository')).toBe('true');
    expect(git(repo, 'rev-list', '--count', commits[2]!)).toBe('1');

    // Another process over the same workspace finds the checkout ready.
    const other = counting();
    const again = new GitWorkspace(path.join(tmp, 'ws-reuse'), 1 << 30, other.runner);
    expect(await again.checkout(target, 'main')).toEqual(first);
    expect(again.checkoutsMade).toBe(0);
    expect(other.counts.get('fetch') ?? 0).toBe(0);
    expect(other.counts.get('worktree add') ?? 0).toBe(0);
  });

  it('resolves an annotated tag, a full and an abbreviated commit id to their commits', async () => {
    const ws = new GitWorkspace(path.join(tmp, 'ws-refs'), 1 << 30, git60s);
    expect((await ws.checkout(target, 'v1')).commit).toBe(commits[0]);
    const byId = await ws.checkout(target, commits[1]!);
    expect(byId.commit).toBe(commits[1]);
    expect(await fs.readFile(path.join(byId.dir, 'dir0', 'note0.md'), 'utf8')).toContain('Commit 1');
    expect((await ws.checkout(target, commits[1]!.slice(0, 10))).commit).toBe(commits[1]);
    await expect(ws.checkout(target, 'no-such-branch')).rejects.toMatchObject({ code: 'invalid_argument', field: 'ref' });
  });

  it('evicts the least recently used checkouts past its cap, never one in use', async () => {
    const root = path.join(tmp, 'ws-cap');
    const probe = new GitWorkspace(path.join(tmp, 'ws-probe'), 1 << 30, git60s);
    await probe.ensure(target, commits[0]!);
    const oneCheckout = (await probe.usage()).bytes;
    // Room for about two small checkouts and their repository, not three.
    const ws = new GitWorkspace(root, Math.floor(oneCheckout * 2.2), git60s);
    const a = await ws.ensure(target, commits[0]!);
    const b = await ws.ensure(target, commits[1]!);
    await new Promise((r) => setTimeout(r, 20));
    await ws.ensure(target, commits[0]!); // a is now more recently used than b
    await ws.withCheckout(target, commits[0]!, async () => {
      const c = await ws.ensure(target, commits[2]!);
      await expect(fs.stat(c.dir)).resolves.toBeDefined();
      await expect(fs.stat(a.dir)).resolves.toBeDefined();
      await expect(fs.stat(b.dir)).rejects.toMatchObject({ code: 'ENOENT' });
    });
    const usage = await ws.usage();
    expect(usage.checkouts.map((c) => c.key.slice(-40)).sort()).toEqual([commits[0], commits[2]].sort());
    // An evicted checkout is made again when a batch needs it.
    const back = await ws.ensure(target, commits[1]!);
    expect(await fs.readFile(path.join(back.dir, 'dir0', 'note0.md'), 'utf8')).toContain('Commit 1');
  });

  it('a 200-file mine of a git source checks its commit out once for all of its batches', async () => {
    const palace = path.join(tmp, 'palace');
    const config = loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: palace });
    const stores = await openStores<JobSpec, JobProgress>(config);
    const embedder = new MiniLmEmbedder(config);
    const { runner, counts } = counting();
    const ws = new GitWorkspace(path.join(palace, 'workspace'), 1 << 30, runner);
    const engine = new LocalJobEngine({ palace: stores.palace, jobs: stores.jobs, locks: stores.locks,
      activities: createJobActivities({ config, stores, embedder, workspace: ws.root }, ws), mineWindow: 2 });
    try {
      const started = await engine.start({
        kind: 'mine',
        source: { kind: 'git', url, ref: 'main' },
        mode: 'projects',
        wing: 'gitmine',
        agent: 't',
        limit: 0,
        dryRun: false,
        extract: 'exchange',
        respectGitignore: true,
        includeIgnored: [],
      });
      const done = await engine.wait(started.job_id, 300_000);
      expect(done.state).toBe('completed');
      expect(done.files_mined).toBe(200);
      expect(await stores.drawers.count({ wing: 'gitmine' })).toBe(200);
      expect(ws.checkoutsMade).toBe(1);
      expect(counts.get('fetch')).toBe(1);
      expect(counts.get('worktree add')).toBe(1);
    } finally {
      await engine.close();
      await stores.close();
      await embedder.close();
    }
  });
});
