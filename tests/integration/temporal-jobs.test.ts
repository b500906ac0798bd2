/**
 * Jobs on Temporal (the cluster profile's JobEngine) against the real dev server and Redis, with
 * the real embedder: conflicting starts, cancel, delete_by_source and sync compared with the
 * embedded profile's runner on the same data, and a mine of a git repository at a ref.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../palace/runtime.js';
import { openRuntime } from '../../app/runtime.js';
import { loadConfig } from '../../core/config.js';
import { isPalaceError } from '../../core/errors.js';
import { MiniLmEmbedder } from '../../embed/minilm.js';
import type { JobEngine, JobProgress, JobSpec } from '../../palace/jobs.js';
import { lockKey } from '../../palace/jobs.js';
import type { TemporalJobEngine } from '../../workflows/temporal/job-engine.js';
import type { JobWorker } from '../../workflows/temporal/worker.js';
import { generateProject } from '../fixtures/generate-project.js';
import type { ClusterTestStores } from './temporal-harness.js';
import { drawerIds, generateSmallFiles, inProcessWorker, mineSpec, openClusterTestStores, openEngine, uniquePalaceName } from './temporal-harness.js';

let tmp: string;
let embedder: MiniLmEmbedder;
let stores: ClusterTestStores;
let engine: TemporalJobEngine;
let worker: JobWorker;
let workerRun: Promise<void>;
let embedded: Runtime;
/** Mine batches in flight, fixed so the cancel bound does not depend on the worker's slots. */
const MINE_WINDOW = 2;

async function run(jobs: JobEngine, spec: JobSpec): Promise<JobProgress> {
  const started = await jobs.start(spec);
  return jobs.wait(started.job_id, 300_000);
}

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mempalace-temporal-'));
  embedder = new MiniLmEmbedder(loadConfig());
  const name = uniquePalaceName('jobs');
  stores = await openClusterTestStores(path.join(tmp, 'palace-cluster'), name);
  const taskQueue = `tq-${name}`;
  worker = await inProcessWorker(stores, embedder, taskQueue);
  workerRun = worker.run();
  engine = await openEngine(stores, taskQueue, undefined, undefined, MINE_WINDOW);
  embedded = await openRuntime(loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: path.join(tmp, 'palace-embedded') }), { embedder });
});

afterAll(async () => {
  worker?.shutdown();
  await workerRun;
  await engine?.close();
  await embedded?.close();
  await stores?.dropRedis();
  await stores?.close();
  await embedder?.close();
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('jobs on Temporal', () => {
  it('two concurrent starts on one source: one runs, the other gets already_running with its job id', async () => {
    const source = path.join(tmp, 'race');
    await generateSmallFiles(source, 300, 5);
    const spec = mineSpec(source, 'race');
    const [a, b] = await Promise.allSettled([engine.start(spec), engine.start(spec)]);
    const started = [a, b].filter((r): r is PromiseFulfilledResult<JobProgress> => r.status === 'fulfilled');
    const refused = [a, b].filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(started).toHaveLength(1);
    expect(refused).toHaveLength(1);
    const error = refused[0]!.reason as unknown;
    expect(isPalaceError(error) && error.code).toBe('already_running');
    const details = (error as { details: { job_id: string; progress: JobProgress } }).details;
    expect(details.job_id).toBe(started[0]!.value.job_id);
    expect(details.progress).toMatchObject({ job_id: started[0]!.value.job_id, state: 'running', kind: 'mine' });

    const done = await engine.wait(started[0]!.value.job_id, 300_000);
    expect(done.state).toBe('completed');
    expect(done.drawers_written).toBe(300);
    // A finished job frees the source: the next start runs (and finds every file unchanged).
    const again = await run(engine, spec);
    expect(again).toMatchObject({ state: 'completed', files_seen: 300, files_skipped: 300 });
    expect(again.job_id).not.toBe(done.job_id);
  });

  it('cancelling a running mine stops within the window of batches, releases the lease and reports partial progress', async () => {
    const source = path.join(tmp, 'cancel');
    await generateSmallFiles(source, 1200, 11);
    const spec = mineSpec(source, 'cancel');
    const started = await engine.start(spec);
    let seen: number;
    for (;;) {
      const p = await engine.progress(started.job_id);
      seen = p.files_seen;
      if (seen >= 64 || p.state !== 'running') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const cancelled = await engine.cancel(started.job_id);
    expect(cancelled.state).toBe('cancelled');
    expect(cancelled.files_seen).toBeLessThan(1200);
    // Within the window: MINE_WINDOW batches of 64 files may be in flight when the signal lands.
    expect(cancelled.files_seen - seen).toBeLessThanOrEqual(MINE_WINDOW * 64);
    expect(String((cancelled.result as { output: string }).output)).toContain('Cancelled after');
    expect(await stores.locks.holder(lockKey(stores.palaceName, spec))).toBeNull();
    const written = await stores.drawers.count({ wing: 'cancel' });
    expect(written).toBe(cancelled.drawers_written);
    expect(written).toBeLessThan(1200);

    const again = await run(engine, spec);
    expect(again.state).toBe('completed');
    expect(again.files_skipped).toBe(cancelled.files_seen);
    expect(await stores.drawers.count({ wing: 'cancel' })).toBe(1200);
  });

  it('delete_by_source counts and samples on a dry run, then deletes exactly that source, as the embedded runner does', async () => {
    const project = path.join(tmp, 'delproj');
    const files = await generateProject(project, 6, 5);
    expect((await run(engine, mineSpec(project, 'delw'))).state).toBe('completed');
    expect((await run(embedded.jobs, mineSpec(project, 'delw'))).state).toBe('completed');
    const target = files[0]!;
    const rows = await stores.drawers.count({ sourceFile: target });
    expect(rows).toBeGreaterThan(0);
    const total = await stores.drawers.count({ wing: 'delw' });

    const dry = (await run(engine, { kind: 'delete_by_source', sourceFile: target, dryRun: true })).result as Record<string, unknown>;
    expect(dry).toMatchObject({ success: true, dry_run: true, source_file: target, match_count: rows, match_rows: rows });
    expect(dry.sample).toEqual([{ wing: 'delw', room: expect.any(String) }]);
    expect(await stores.drawers.count({ sourceFile: target })).toBe(rows);
    expect(dry).toEqual((await run(embedded.jobs, { kind: 'delete_by_source', sourceFile: target, dryRun: true })).result);

    const applied = (await run(engine, { kind: 'delete_by_source', sourceFile: target, dryRun: false })).result as Record<string, unknown>;
    expect(applied).toMatchObject({ success: true, dry_run: false, deleted: rows });
    expect(await stores.drawers.count({ sourceFile: target })).toBe(0);
    expect(await stores.drawers.count({ wing: 'delw' })).toBe(total - rows);
    expect(applied).toEqual((await run(embedded.jobs, { kind: 'delete_by_source', sourceFile: target, dryRun: false })).result);
    expect(await drawerIds(stores.drawers, 'delw')).toEqual(await drawerIds(embedded.stores.drawers, 'delw'));

    const noop = (await run(engine, { kind: 'delete_by_source', sourceFile: target, dryRun: false })).result as Record<string, unknown>;
    expect(noop).toEqual({ success: true, dry_run: false, source_file: target, deleted: 0 });
  });

  it('sync reports and removes exactly the deleted and gitignored files, keeping unresolved ones, as the embedded runner does', async () => {
    const project = path.join(tmp, 'syncproj');
    const files = await generateProject(project, 30, 3);
    await fs.writeFile(path.join(project, '.gitignore'), '');
    await fs.mkdir(path.join(project, 'lonely'));
    await fs.writeFile(path.join(project, 'lonely', 'only.md'), 'The only file of a directory that will vanish entirely with its folder. '.repeat(4));
    expect((await run(engine, mineSpec(project, 'syncw'))).state).toBe('completed');
    expect((await run(embedded.jobs, mineSpec(project, 'syncw'))).state).toBe('completed');
    const deleted = files.slice(0, 2);
    const ignored = files[5]!;
    for (const f of deleted) await fs.rm(f);
    await fs.writeFile(path.join(project, '.gitignore'), `${path.relative(project, ignored)}\n`);
    await fs.rm(path.join(project, 'lonely'), { recursive: true });
    const countOf = async (f: string) => stores.drawers.count({ wing: 'syncw', sourceFile: f });
    const expectedRemoved = (await Promise.all([...deleted, ignored].map(countOf))).reduce((a, b) => a + b, 0);

    const dry = await run(engine, { kind: 'sync', wing: 'syncw', projectDir: project, apply: false });
    const report = dry.result as Record<string, unknown> & { by_source: Record<string, number>; unresolved_by_source: Record<string, number> };
    expect(report.dry_run).toBe(true);
    expect(Object.keys(report.by_source).sort()).toEqual([...deleted, ignored].sort());
    expect(report.missing).toBe((await Promise.all(deleted.map(countOf))).reduce((a, b) => a + b, 0));
    expect(report.gitignored).toBe(await countOf(ignored));
    expect(Object.keys(report.unresolved_by_source)).toEqual([path.join(project, 'lonely', 'only.md')]);
    expect(report.removed_drawers).toBe(0);
    expect(report).toEqual((await run(embedded.jobs, { kind: 'sync', wing: 'syncw', projectDir: project, apply: false })).result);

    const before = await stores.drawers.count({ wing: 'syncw' });
    const applied = await run(engine, { kind: 'sync', wing: 'syncw', projectDir: project, apply: true });
    expect(applied.state).toBe('completed');
    expect((applied.result as { removed_drawers: number }).removed_drawers).toBe(expectedRemoved);
    expect(await stores.drawers.count({ wing: 'syncw' })).toBe(before - expectedRemoved);
    for (const f of [...deleted, ignored]) expect(await countOf(f)).toBe(0);
    expect(await countOf(path.join(project, 'lonely', 'only.md'))).toBeGreaterThan(0);
    expect(applied.result).toEqual((await run(embedded.jobs, { kind: 'sync', wing: 'syncw', projectDir: project, apply: true })).result);
    expect(await drawerIds(stores.drawers, 'syncw')).toEqual(await drawerIds(embedded.stores.drawers, 'syncw'));
  });

  it('a mine of a git repository at a ref records the commit it mined', async () => {
    const bare = path.join(tmp, 'repo.git');
    const clone = path.join(tmp, 'repo-work');
    const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' } }).trim();
    await fs.mkdir(bare);
    git(bare, 'init', '--quiet', '--bare', '--initial-branch=main');
    git(tmp, 'clone', '--quiet', bare, clone);
    await fs.writeFile(path.join(clone, 'first.md'), 'The first commit holds this note about leases, fences and cursors in the job engine.\n');
    git(clone, 'add', '.');
    git(clone, 'commit', '--quiet', '-m', 'first');
    const first = git(clone, 'rev-parse', 'HEAD');
    await fs.writeFile(path.join(clone, 'second.md'), 'The second commit adds a note about workers that hand batches back when they stop.\n');
    git(clone, 'add', '.');
    git(clone, 'commit', '--quiet', '-m', 'second');
    const second = git(clone, 'rev-parse', 'HEAD');
    git(clone, 'push', '--quiet', 'origin', 'main');
    expect(second).not.toBe(first);

    const url = `file://${bare}`;
    const done = await run(engine, mineSpec(url, 'gitw', { source: { kind: 'git', url, ref: 'main' } }));
    expect(done.state).toBe('completed');
    expect((done.result as { commit: string }).commit).toBe(second);
    const page = await stores.drawers.list({ wing: 'gitw' }, 0, 100);
    expect(page.items.map((d) => d.meta.source_file).sort()).toEqual([`${url}:first.md`, `${url}:second.md`]);
    for (const d of page.items) expect(d.meta.source_commit).toBe(second);

    // An older ref mines that commit's tree and records that commit (second.md is not in it).
    const older = await run(engine, mineSpec(url, 'gitold', { source: { kind: 'git', url, ref: first } }));
    expect((older.result as { commit: string }).commit).toBe(first);
    const olderPage = await stores.drawers.list({ wing: 'gitold' }, 0, 100);
    expect(olderPage.items.map((d) => [d.meta.source_file, d.meta.source_commit])).toEqual([[`${url}:first.md`, first]]);
  });
});
