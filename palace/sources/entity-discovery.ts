/**
 * Entity discovery for `mempalace init <dir>` (docs/palace-behaviour.md §7.1): the I/O around the
 * pure signals of core/entities.ts. It finds the git repositories under the directory, their
 * manifests and recent authors, Claude Code project folders, and prose files, and merges what
 * each proposes, strongest source first. Nothing is written here; confirming is a separate step.
 */
import { execFile } from 'node:child_process';
import type { Dirent } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { discoverFromGit, discoverFromProse, MANIFEST_FILES, mergeProposals, pickManifest, projectNameFromClaudeFolder,
  projectNameFromManifest } from '../../core/entities.js';
import type { EntityProposal, FoundManifest, GitCommitAuthor, ManifestFile, RepositoryHistory } from '../../core/entities.js';
import { compareCodePoints, SKIP_DIRS } from '../../core/scan.js';
import { scanProject } from './scan.js';

const run = promisify(execFile);
const MAX_DEPTH = 6;
const MAX_COMMITS = 1000;
const PROSE_EXTENSIONS: ReadonlySet<string> = new Set(['.txt', '.md', '.rst', '.csv']);
const MAX_PROSE_FILES = 10;
const PROSE_WINDOW_CHARS = 5000;
const SESSION_HEAD_BYTES = 64 * 1024;

async function listDir(dir: string): Promise<Dirent[]> {
  return fs.readdir(dir, { withFileTypes: true }).catch(() => []);
}

/** Git repositories at or under `root` (depth ≤ 6); a repository's own subfolders are not entered. */
async function findRepositories(root: string): Promise<string[]> {
  const found: string[] = [];
  const visit = async (dir: string, depth: number): Promise<void> => {
    const entries = await listDir(dir);
    if (entries.some((e) => e.name === '.git')) {
      found.push(dir);
      return;
    }
    if (depth >= MAX_DEPTH) return;
    for (const e of entries.filter((d) => d.isDirectory() && !SKIP_DIRS.has(d.name)).sort((a, b) => compareCodePoints(a.name, b.name))) {
      await visit(path.join(dir, e.name), depth + 1);
    }
  };
  await visit(root, 0);
  return found;
}

async function git(repo: string, args: readonly string[]): Promise<string> {
  try {
    return (await run('git', ['-C', repo, ...args], { maxBuffer: 16 * 1024 * 1024 })).stdout;
  } catch {
    // No commits yet, or no git on this machine: the signal is absent, not an error.
    return '';
  }
}

async function repositoryHistory(repo: string): Promise<RepositoryHistory> {
  const manifests: FoundManifest[] = [];
  const names: ReadonlySet<string> = new Set(MANIFEST_FILES);
  for await (const entry of scanProject(repo, { extensions: new Set(['.toml', '.json', '.mod']) })) {
    if (entry.kind !== 'file') continue;
    const rel = entry.file.relativePath;
    const file = path.posix.basename(rel);
    if (!names.has(file) || rel.split('/').length > MAX_DEPTH) continue;
    const name = projectNameFromManifest(file as ManifestFile, await fs.readFile(entry.file.absolutePath, 'utf8'));
    if (name !== undefined) manifests.push({ relativePath: rel, file: file as ManifestFile, name });
  }
  const picked = pickManifest(manifests);
  const log = await git(repo, ['log', '-n', String(MAX_COMMITS), '--format=%an%x09%ae']);
  const commits = log.split('\n').filter((l) => l.includes('\t')).map((l): GitCommitAuthor => {
    const [name, email] = l.split('\t');
    return { name: name!, email: email ?? '' };
  });
  return { project: picked?.name ?? path.basename(repo), hasManifest: picked !== undefined, commits };
}

/** The `cwd` of the first record of a Claude Code session file that names one. */
async function sessionCwd(file: string): Promise<string | undefined> {
  const handle = await fs.open(file, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(SESSION_HEAD_BYTES), 0, SESSION_HEAD_BYTES, 0);
    for (const line of buffer.subarray(0, bytesRead).toString('utf8').split('\n')) {
      try {
        const cwd = (JSON.parse(line) as { cwd?: unknown }).cwd;
        if (typeof cwd === 'string' && cwd !== '') return cwd;
      } catch {
        // A cut-off last line or a non-JSON line: look at the next.
      }
    }
    return undefined;
  } finally {
    await handle.close();
  }
}

/** Claude Code project folders (`<folder>/<session>.jsonl`) at `root` and one level below: one project each. */
async function claudeProjects(root: string): Promise<EntityProposal[]> {
  const folders = [root, ...(await listDir(root)).filter((d) => d.isDirectory() && !SKIP_DIRS.has(d.name)).map((d) => path.join(root, d.name))];
  const out: EntityProposal[] = [];
  for (const folder of folders) {
    const sessions = (await listDir(folder)).filter((d) => d.isFile() && d.name.endsWith('.jsonl'));
    if (sessions.length === 0) continue;
    const stamped = await Promise.all(sessions.map(async (d) => {
      const file = path.join(folder, d.name);
      return { file, mtimeMs: (await fs.stat(file)).mtimeMs };
    }));
    const newest = stamped.sort((a, b) => b.mtimeMs - a.mtimeMs)[0]!;
    const name = projectNameFromClaudeFolder(path.basename(folder), await sessionCwd(newest.file));
    out.push({ name, kind: 'project', confidence: 0.85, source: 'claude_code', evidence: sessions.length });
  }
  return out;
}

async function proseWindows(root: string): Promise<string[]> {
  const windows: string[] = [];
  for await (const entry of scanProject(root, { extensions: PROSE_EXTENSIONS })) {
    if (entry.kind !== 'file') continue;
    windows.push((await fs.readFile(entry.file.absolutePath, 'utf8')).slice(0, PROSE_WINDOW_CHARS));
    if (windows.length >= MAX_PROSE_FILES) break;
  }
  return windows;
}

/** The git user of `dir`, whose projects count as "mine". */
async function gitUser(dir: string): Promise<{ name?: string; email?: string }> {
  const [name, email] = await Promise.all([git(dir, ['config', 'user.name']), git(dir, ['config', 'user.email'])]);
  return { ...(name.trim() ? { name: name.trim() } : {}), ...(email.trim() ? { email: email.trim() } : {}) };
}

/** People and projects proposed for the directory, strongest source first (manifests and git, Claude Code folders, prose). */
export async function discoverEntities(dir: string, languages: readonly string[]): Promise<EntityProposal[]> {
  const root = path.resolve(dir);
  const repos = await Promise.all((await findRepositories(root)).map(repositoryHistory));
  const fromGit = discoverFromGit(repos, await gitUser(root));
  return mergeProposals([fromGit.projects, fromGit.people, await claudeProjects(root), discoverFromProse(await proseWindows(root), languages)]);
}
