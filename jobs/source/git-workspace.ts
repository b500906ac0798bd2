/**
 * A worker's git workspace: one shallow bare repository per URL and one checkout per commit,
 * made once and reused by every batch of every mine of that commit on this worker (a batch that
 * lands on a worker which has not seen the commit fetches it there once). The workspace has a
 * size cap: past it, the least recently used checkouts (and repositories left without one) are
 * evicted, never a checkout this process is using.
 *
 * Layout under the workspace root:
 *   repos/<url-hash>.git            bare, shallow: only the commits mined are fetched (depth 1)
 *   checkouts/<url-hash>-<commit>/  the tree at that commit (a worktree of the bare repository)
 *   checkouts/<url-hash>-<commit>.json  written once the checkout is whole: its size; the file's
 *                                   mtime is the checkout's last use
 *   locks/<url-hash>.lock            one writer per repository across the processes sharing it
 *
 * URL policy (which URLs and protocols are allowed) is not decided here: commands that reach the
 * remote run through the `remote` runner the caller built for an approved URL, local ones through
 * the workspace's own runner, which allows no transport (both from jobs/source/git.ts).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { invalidArgument } from '../../core/errors.js';
import { hashN } from '../../core/text.js';
import type { GitTarget } from '../../palace/sources/sources.js';

/** Runs git with `args` in `cwd` and gives its trimmed stdout; `capDir` is size-capped while it runs (jobs/source/git.ts builds them). */
export type GitRunner = (args: string[], cwd?: string, capDir?: string) => Promise<string>;
/** The runner for commands reaching an approved `target`, or (no target) for local commands only. */
export type GitRunnerFactory = (target?: GitTarget) => GitRunner;

export interface Checkout {
  dir: string;
  commit: string;
}

interface CheckoutMeta {
  url: string;
  commit: string;
  bytes: number;
}

const FULL_SHA = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/;
const SHORT_SHA = /^[0-9a-f]{7,39}$/;
/** Refs in a bare repository that keep the mined commits (and their objects) alive. */
const KEEP_REFS = 'refs/mempalace/';
/** A lock whose holder has not touched it for this long is taken over (its process died). */
const STALE_LOCK_MS = 10 * 60_000;

async function exists(file: string): Promise<boolean> {
  return fs.stat(file).then(() => true, () => false);
}

/** Held by a process of this host that is gone, or untouched for STALE_LOCK_MS (another host). */
async function lockIsStale(lock: string): Promise<boolean> {
  const [text, st] = await Promise.all([fs.readFile(lock, 'utf8').catch(() => ''), fs.stat(lock).catch(() => undefined)]);
  if (!st) return false;
  const [host, pid] = text.split(' ');
  if (host === os.hostname() && pid) {
    try {
      process.kill(Number(pid), 0);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ESRCH') return true;
    }
  }
  return Date.now() - st.mtimeMs > STALE_LOCK_MS;
}

async function sizeOf(dir: string): Promise<number> {
  let total = 0;
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += await sizeOf(p);
    else if (e.isFile()) total += (await fs.stat(p).catch(() => ({ size: 0 }))).size;
  }
  return total;
}

export class GitWorkspace {
  /** Checkouts in use by this process (url-hash-commit → users). */
  private readonly pinned = new Map<string, number>();
  /** Checkouts made or verified by this process, so a batch costs one stat, not a git command. */
  private readonly known = new Map<string, Promise<Checkout>>();
  /** Checkouts this instance made rather than found ready (reported, and counted by tests). */
  checkoutsMade = 0;

  private readonly git: GitRunner;

  constructor(readonly root: string, readonly capBytes: number, private readonly gitFor: GitRunnerFactory) {
    this.git = gitFor();
  }

  private repoDir(url: string): string {
    return path.join(this.root, 'repos', `${hashN(url, 16)}.git`);
  }

  private checkoutKey(url: string, commit: string): string {
    return `${hashN(url, 16)}-${commit}`;
  }

  /**
   * The commit `ref` names in the repository at `url` and its checkout in this workspace,
   * fetched and checked out only if this workspace does not have it yet.
   */
  async checkout(target: GitTarget, ref: string): Promise<Checkout> {
    const commit = await this.resolveRef(target.url, ref, this.gitFor(target));
    return this.ensure(target, commit);
  }

  /** The checkout of `commit` (a full id), made once per workspace; later calls only mark its use. */
  async ensure(target: GitTarget, commit: string): Promise<Checkout> {
    const url = target.url;
    const key = this.checkoutKey(url, commit);
    const dir = path.join(this.root, 'checkouts', key);
    const cached = this.known.get(key);
    // Another process sharing the workspace may have evicted it since.
    if (cached && (await exists(`${dir}.json`))) {
      await this.touch(key);
      return cached;
    }
    const made = this.make(url, commit, key, dir, this.gitFor(target));
    this.known.set(key, made);
    made.catch(() => this.known.delete(key));
    return made;
  }

  /** Run `use` with the checkout pinned, so no eviction in this process removes it meanwhile. */
  async withCheckout<T>(target: GitTarget, commit: string, use: (c: Checkout) => Promise<T>): Promise<T> {
    const key = this.checkoutKey(target.url, commit);
    this.pinned.set(key, (this.pinned.get(key) ?? 0) + 1);
    try {
      return await use(await this.ensure(target, commit));
    } finally {
      const n = (this.pinned.get(key) ?? 1) - 1;
      if (n === 0) this.pinned.delete(key);
      else this.pinned.set(key, n);
    }
  }

  /** Branch or tag → commit without fetching objects; a full commit id stands for itself. */
  private async resolveRef(url: string, ref: string, remote: GitRunner): Promise<string> {
    const listed = await remote(['ls-remote', '--', url, ref, `refs/heads/${ref}`, `refs/tags/${ref}`, `refs/tags/${ref}^{}`]);
    const lines = listed.split('\n').filter((l) => l.trim() !== '').map((l) => l.split('\t') as [string, string]);
    // A peeled annotated tag names the commit; otherwise a branch, then a tag, then any match.
    const pick = lines.find(([, name]) => name === `refs/tags/${ref}^{}`) ?? lines.find(([, name]) => name === `refs/heads/${ref}`)
      ?? lines.find(([, name]) => name === `refs/tags/${ref}`) ?? lines[0];
    if (pick) return pick[0];
    if (FULL_SHA.test(ref)) return ref;
    if (SHORT_SHA.test(ref)) return this.resolveShortId(url, ref, remote);
    throw invalidArgument('ref', 'git_ref_exists', `ref '${ref}' not found in ${url}`);
  }

  /** An abbreviated commit id: only a full fetch of the branches and tags can expand it. */
  private async resolveShortId(url: string, ref: string, remote: GitRunner): Promise<string> {
    return this.withRepoLock(url, async () => {
      const repo = await this.bareRepo(url);
      await remote(['fetch', '--quiet', '--tags', '--force', '--', url, '+refs/heads/*:refs/heads/*'], repo);
      const commit = await this.git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], repo).catch(() => '');
      if (!commit) throw invalidArgument('ref', 'git_ref_exists', `ref '${ref}' not found in ${url}`);
      return commit;
    });
  }

  /** The repository's bare clone in this workspace, created empty when missing. */
  private async bareRepo(url: string): Promise<string> {
    const repo = this.repoDir(url);
    if (!(await exists(path.join(repo, 'HEAD')))) {
      await fs.rm(repo, { recursive: true, force: true });
      await fs.mkdir(path.dirname(repo), { recursive: true });
      await this.git(['init', '--quiet', '--bare', repo]);
    }
    return repo;
  }

  private async make(url: string, commit: string, key: string, dir: string, remote: GitRunner): Promise<Checkout> {
    const made = await this.withRepoLock(url, async () => {
      if (await exists(`${dir}.json`)) return false;
      const repo = await this.bareRepo(url);
      try {
        await this.fetchCommit(repo, url, commit, remote);
        // A checkout counts once its .json is written (last); one left half-made by a crash is redone.
        await fs.rm(dir, { recursive: true, force: true });
        await this.git(['worktree', 'prune'], repo);
        await fs.mkdir(path.dirname(dir), { recursive: true });
        await this.git(['worktree', 'add', '--quiet', '--force', '--detach', dir, commit], repo, dir);
      } catch (e) {
        // Stopped by the size cap or the timeout: neither the repository nor the checkout is trusted.
        const rule = (e as { rule?: string }).rule;
        if (rule === 'git_max_bytes' || rule === 'git_timeout') {
          await fs.rm(dir, { recursive: true, force: true });
          await fs.rm(repo, { recursive: true, force: true });
        }
        throw e;
      }
      const meta: CheckoutMeta = { url, commit, bytes: await sizeOf(dir) };
      await fs.writeFile(`${dir}.json`, JSON.stringify(meta));
      return true;
    });
    if (made) {
      this.checkoutsMade++;
      await this.evict(key);
    } else {
      await this.touch(key);
    }
    return { dir, commit };
  }

  /** Only the commit mined, at depth 1; a server that refuses to serve an id gets a full fetch. */
  private async fetchCommit(repo: string, url: string, commit: string, remote: GitRunner): Promise<void> {
    const has = await this.git(['cat-file', '-e', `${commit}^{commit}`], repo).then(() => true, () => false);
    if (has && (await this.git(['rev-parse', '--verify', '--quiet', `${KEEP_REFS}${commit}`], repo).then(() => true, () => false))) return;
    if (!has) {
      try {
        await remote(['fetch', '--quiet', '--depth=1', '--', url, commit], repo);
      } catch {
        await remote(['fetch', '--quiet', '--tags', '--force', '--', url, '+refs/heads/*:refs/heads/*'], repo);
      }
    }
    const fetched = await this.git(['cat-file', '-e', `${commit}^{commit}`], repo).then(() => true, () => false);
    if (!fetched) throw invalidArgument('ref', 'git_ref_exists', `commit ${commit} not found in ${url}`);
    // A ref keeps the commit's objects from git's pruning while checkouts borrow them.
    await this.git(['update-ref', `${KEEP_REFS}${commit}`, commit], repo);
  }

  private async touch(key: string): Promise<void> {
    const now = new Date();
    await fs.utimes(path.join(this.root, 'checkouts', `${key}.json`), now, now).catch(() => undefined);
  }

  /** Total bytes of checkouts and repositories, and the checkouts oldest use first. */
  async usage(): Promise<{ bytes: number; checkouts: { key: string; url: string; bytes: number; lastUsedMs: number }[] }> {
    const dir = path.join(this.root, 'checkouts');
    const names = await fs.readdir(dir).catch(() => [] as string[]);
    const checkouts: { key: string; url: string; bytes: number; lastUsedMs: number }[] = [];
    for (const name of names.filter((n) => n.endsWith('.json'))) {
      const file = path.join(dir, name);
      const [text, st] = await Promise.all([fs.readFile(file, 'utf8').catch(() => undefined), fs.stat(file).catch(() => undefined)]);
      if (!text || !st) continue;
      const meta = JSON.parse(text) as CheckoutMeta;
      checkouts.push({ key: name.slice(0, -'.json'.length), url: meta.url, bytes: meta.bytes, lastUsedMs: st.mtimeMs });
    }
    checkouts.sort((a, b) => a.lastUsedMs - b.lastUsedMs);
    const repos = await this.repoSizes();
    const bytes = checkouts.reduce((a, c) => a + c.bytes, 0) + [...repos.values()].reduce((a, b) => a + b, 0);
    return { bytes, checkouts };
  }

  private async repoSizes(): Promise<Map<string, number>> {
    const dir = path.join(this.root, 'repos');
    const names = await fs.readdir(dir).catch(() => [] as string[]);
    const sizes = new Map<string, number>();
    for (const name of names) sizes.set(path.join(dir, name), await sizeOf(path.join(dir, name)));
    return sizes;
  }

  /** Past the cap: drop least recently used checkouts (not `keep`, not pinned), then orphaned repositories. */
  private async evict(keep: string): Promise<void> {
    const { checkouts, ...total } = await this.usage();
    let { bytes } = total;
    for (const c of checkouts) {
      if (bytes <= this.capBytes) break;
      if (c.key === keep || this.pinned.has(c.key)) continue;
      const dir = path.join(this.root, 'checkouts', c.key);
      await fs.rm(`${dir}.json`, { force: true });
      await fs.rm(dir, { recursive: true, force: true });
      this.known.delete(c.key);
      const commit = c.key.slice(c.key.indexOf('-') + 1);
      const repo = this.repoDir(c.url);
      await this.git(['worktree', 'prune'], repo).catch(() => undefined);
      await this.git(['update-ref', '-d', `${KEEP_REFS}${commit}`], repo).catch(() => undefined);
      bytes -= c.bytes;
    }
    if (bytes <= this.capBytes) return;
    const left = new Set((await this.usage()).checkouts.map((c) => this.repoDir(c.url)));
    for (const [repo, size] of await this.repoSizes()) {
      if (bytes <= this.capBytes) break;
      if (left.has(repo)) continue;
      await fs.rm(repo, { recursive: true, force: true });
      bytes -= size;
    }
  }

  /** One writer per repository across processes: an exclusive lock file, taken over once stale. */
  private async withRepoLock<T>(url: string, body: () => Promise<T>): Promise<T> {
    const lock = path.join(this.root, 'locks', `${hashN(url, 16)}.lock`);
    await fs.mkdir(path.dirname(lock), { recursive: true });
    for (;;) {
      try {
        const handle = await fs.open(lock, 'wx');
        await handle.writeFile(`${os.hostname()} ${process.pid}`);
        await handle.close();
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        if (await lockIsStale(lock)) await fs.rm(lock, { force: true });
        else await new Promise((r) => setTimeout(r, 200));
      }
    }
    const beat = setInterval(() => {
      const now = new Date();
      fs.utimes(lock, now, now).catch(() => undefined);
    }, STALE_LOCK_MS / 4);
    try {
      return await body();
    } finally {
      clearInterval(beat);
      await fs.rm(lock, { force: true });
    }
  }
}
