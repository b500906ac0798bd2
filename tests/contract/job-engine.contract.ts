/**
 * The JobEngine contract, written once and run against both engines (the in-process runner of the
 * embedded profile, the Temporal engine of the cluster profile) with real files, the real
 * embedder and the engines' real stores: start, progress and wait with exact counts; one writing
 * job per source (a second start is `already_running` carrying the running job); cancel within
 * the mine window, releasing the lock; dry runs that take no lock; delete_by_source and sync,
 * dry run then apply, with exact reports; unknown jobs. Every result is compared with exact
 * expected values, so two engines that pass return the same thing for the same data.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPalaceError } from '../../core/errors.js';
import type { JobEngine, JobProgress, JobSpec } from '../../jobs/job.js';
import { lockKey } from '../../jobs/job.js';
import type { DrawerStore } from '../../stores/ports/palace-stores.js';
import type { Locks } from '../../stores/ports/locks.js';
import { generateProject } from '../fixtures/generate-project.js';
import { drawerIds, generateSmallFiles, mineSpec } from '../integration/temporal-harness.js';

export interface OpenedJobEngine {
  engine: JobEngine;
  /** The stores the engine's jobs write to and lock in. */
  drawers: DrawerStore;
  locks: Locks;
  /** The palace the engine keys its locks by (`lockKey(palace, spec)`). */
  palace: string;
  /** Mine batches the engine keeps in flight: a cancel stops within `mineWindow × 64` files. */
  mineWindow: number;
  cleanup(): Promise<void>;
}

const BATCH_FILES = 64;

export function describeJobEngineContract(engineName: string, open: () => Promise<OpenedJobEngine>): void {
  describe(`JobEngine contract — ${engineName}`, () => {
    let opened: OpenedJobEngine;
    let engine: JobEngine;
    let tmp: string;

    const run = async (spec: JobSpec): Promise<JobProgress> => engine.wait((await engine.start(spec)).job_id, 300_000);

    beforeAll(async () => {
      tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mempalace-engine-contract-'));
      opened = await open();
      engine = opened.engine;
    });

    afterAll(async () => {
      await opened?.cleanup();
      await fs.rm(tmp, { recursive: true, force: true });
    });

    it('a mine reports exact counts; two concurrent starts on one source: one runs, the other gets already_running with its job id', async () => {
      const source = path.join(tmp, 'race');
      await generateSmallFiles(source, 300, 5);
      const spec = mineSpec(source, 'race');
      const [a, b] = await Promise.allSettled([engine.start(spec), engine.start(spec)]);
      const started = [a, b].filter((r): r is PromiseFulfilledResult<JobProgress> => r.status === 'fulfilled');
      const refused = [a, b].filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(started).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expect(started[0]!.value).toMatchObject({ state: 'running', kind: 'mine', lock_key: lockKey(opened.palace, spec), source, wing: 'race', mode: 'projects',
        trigger: 'user' });
      const error = refused[0]!.reason as unknown;
      expect(isPalaceError(error) && error.code).toBe('already_running');
      const details = (error as { details: { job_id: string; progress: JobProgress } }).details;
      expect(details.job_id).toBe(started[0]!.value.job_id);
      expect(details.progress).toMatchObject({ job_id: started[0]!.value.job_id, state: 'running', kind: 'mine' });

      const seen: JobProgress[] = [];
      const done = await engine.wait(started[0]!.value.job_id, 300_000, (p) => seen.push(p));
      expect(done).toMatchObject({ state: 'completed', files_total: 300, files_seen: 300, files_skipped: 0, files_mined: 300, drawers_written: 300, errors: 0,
        eta_s: 0 });
      expect((done.result as { success: boolean }).success).toBe(true);
      expect(seen.at(-1)).toEqual(done);
      for (let i = 1; i < seen.length; i++) expect(seen[i]!.files_seen).toBeGreaterThanOrEqual(seen[i - 1]!.files_seen);
      expect(await opened.drawers.count({ wing: 'race' })).toBe(300);
      expect(await engine.progress(done.job_id)).toEqual(done);
      expect((await engine.list(50)).find((j) => j.job_id === done.job_id)).toMatchObject({ source, wing: 'race', mode: 'projects' });
      expect(done).toMatchObject({ source, wing: 'race', mode: 'projects' });
      // A finished job frees the source: the next start runs (and finds every file unchanged).
      const again = await run(spec);
      expect(again).toMatchObject({ state: 'completed', files_seen: 300, files_skipped: 300 });
      expect(again.job_id).not.toBe(done.job_id);
      expect(await opened.locks.holder(lockKey(opened.palace, spec))).toBeNull();
    });

    it('cancelling a running mine stops within the window of batches, releases the lock and reports partial progress; the next start completes', async () => {
      const source = path.join(tmp, 'cancel');
      await generateSmallFiles(source, 1200, 11);
      const spec = mineSpec(source, 'cancel');
      const started = await engine.start(spec);
      let seen: number;
      for (;;) {
        const p = await engine.progress(started.job_id);
        seen = p.files_seen;
        if (seen >= BATCH_FILES || p.state !== 'running') break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const cancelled = await engine.cancel(started.job_id);
      expect(cancelled.state).toBe('cancelled');
      expect(cancelled.files_seen).toBeLessThan(1200);
      // Within the window: `mineWindow` batches of 64 files may be in flight when the cancel lands.
      expect(cancelled.files_seen - seen).toBeLessThanOrEqual(opened.mineWindow * BATCH_FILES);
      expect(String((cancelled.result as { output: string }).output)).toContain('Cancelled after');
      expect(await opened.locks.holder(lockKey(opened.palace, spec))).toBeNull();
      const written = await opened.drawers.count({ wing: 'cancel' });
      expect(written).toBe(cancelled.drawers_written);
      expect(written).toBeLessThan(1200);

      const again = await run(spec);
      expect(again.state).toBe('completed');
      expect(again.files_skipped).toBe(cancelled.files_seen);
      expect(await opened.drawers.count({ wing: 'cancel' })).toBe(1200);
    });

    it('dry runs take no lock: two at once on one source both run, and neither writes', async () => {
      const source = path.join(tmp, 'dry');
      await generateSmallFiles(source, 40, 3);
      const spec = mineSpec(source, 'dry', { dryRun: true });
      const [a, b] = await Promise.all([engine.start(spec), engine.start(spec)]);
      expect(a.job_id).not.toBe(b.job_id);
      expect(a.lock_key).not.toBe(lockKey(opened.palace, spec));
      expect(a.lock_key).not.toBe(b.lock_key);
      expect(await opened.locks.holder(lockKey(opened.palace, spec))).toBeNull();
      for (const job of [a, b]) {
        const done = await engine.wait(job.job_id, 300_000);
        expect(done).toMatchObject({ state: 'completed', files_seen: 40, drawers_written: 40 });
        expect(done.result).toMatchObject({ success: true, dry_run: true });
        expect(String((done.result as { output: string }).output)).toContain('DRY RUN: nothing was written');
      }
      expect(await opened.drawers.count({ wing: 'dry' })).toBe(0);
    });

    it('delete_by_source counts and samples on a dry run, then deletes exactly that source', async () => {
      const project = path.join(tmp, 'delproj');
      const files = await generateProject(project, 6, 5);
      expect((await run(mineSpec(project, 'delw'))).state).toBe('completed');
      const target = files[0]!;
      const rows = await opened.drawers.count({ sourceFile: target });
      expect(rows).toBeGreaterThan(0);
      const total = await opened.drawers.count({ wing: 'delw' });
      const targetIds = new Set((await opened.drawers.list({ sourceFile: target }, 0, 1000)).items.map((d) => d.id));
      const keptIds = (await drawerIds(opened.drawers, 'delw')).filter((id) => !targetIds.has(id));

      const dry = (await run({ kind: 'delete_by_source', sourceFile: target, dryRun: true })).result as Record<string, unknown>;
      expect(dry).toEqual({
        success: true,
        dry_run: true,
        source_file: target,
        match_count: rows,
        match_rows: rows,
        sample: [{ wing: 'delw', room: expect.any(String) }],
        closet_match_count: 0,
        hint: `Dry run: nothing was deleted. ${rows} drawers (${rows} rows) would be deleted; pass dry_run=false to delete them.`,
      });
      expect(await opened.drawers.count({ sourceFile: target })).toBe(rows);

      const applied = (await run({ kind: 'delete_by_source', sourceFile: target, dryRun: false })).result as Record<string, unknown>;
      expect(applied).toEqual({ success: true, dry_run: false, source_file: target, deleted: rows, deleted_rows: rows, closets_deleted: 0 });
      expect(await opened.drawers.count({ sourceFile: target })).toBe(0);
      expect(await opened.drawers.count({ wing: 'delw' })).toBe(total - rows);
      expect(await drawerIds(opened.drawers, 'delw')).toEqual(keptIds);

      const noop = (await run({ kind: 'delete_by_source', sourceFile: target, dryRun: false })).result as Record<string, unknown>;
      expect(noop).toEqual({ success: true, dry_run: false, source_file: target, deleted: 0 });
    });

    it('sync reports and removes exactly the deleted and gitignored files, keeping unresolved ones', async () => {
      const project = path.join(tmp, 'syncproj');
      const files = await generateProject(project, 30, 3);
      await fs.writeFile(path.join(project, '.gitignore'), '');
      await fs.mkdir(path.join(project, 'lonely'));
      const lonely = path.join(project, 'lonely', 'only.md');
      await fs.writeFile(lonely, 'The only file of a directory that will vanish entirely with its folder. '.repeat(4));
      expect((await run(mineSpec(project, 'syncw'))).state).toBe('completed');
      const deleted = files.slice(0, 2);
      const ignored = files[5]!;
      for (const f of deleted) await fs.rm(f);
      await fs.writeFile(path.join(project, '.gitignore'), `${path.relative(project, ignored)}\n`);
      await fs.rm(path.join(project, 'lonely'), { recursive: true });
      const countOf = async (f: string) => opened.drawers.count({ wing: 'syncw', sourceFile: f });
      const removable = Object.fromEntries(await Promise.all([...deleted, ignored].map(async (f) => [f, await countOf(f)] as const)));
      const expectedRemoved = Object.values(removable).reduce((a, b) => a + b, 0);
      const missing = (await Promise.all(deleted.map(countOf))).reduce((a, b) => a + b, 0);
      const gitignored = await countOf(ignored);
      const unresolved = await countOf(lonely);
      expect(unresolved).toBeGreaterThan(0);
      const before = await opened.drawers.count({ wing: 'syncw' });
      const expectedReport = {
        scanned: before,
        kept: before - missing - gitignored - unresolved,
        gitignored,
        missing,
        unresolved,
        no_source: 0,
        out_of_scope: 0,
        removed_closets: 0,
        by_source: removable,
        unresolved_by_source: { [lonely]: unresolved },
        guard: { needs_force: false, forced: false, stopped: false, reasons: [], message: '' },
      };

      const dry = await run({ kind: 'sync', wing: 'syncw', projectDir: project, apply: false });
      expect(dry.state).toBe('completed');
      expect(dry.result).toEqual({ success: true, ...expectedReport, dry_run: true, removed_drawers: 0 });
      expect(Object.keys(removable).sort()).toEqual([...deleted, ignored].sort());
      expect(await opened.drawers.count({ wing: 'syncw' })).toBe(before);

      const applied = await run({ kind: 'sync', wing: 'syncw', projectDir: project, apply: true });
      expect(applied.state).toBe('completed');
      expect(applied.result).toEqual({ success: true, ...expectedReport, dry_run: false, removed_drawers: expectedRemoved });
      expect(await opened.drawers.count({ wing: 'syncw' })).toBe(before - expectedRemoved);
      for (const f of [...deleted, ignored]) expect(await countOf(f)).toBe(0);
      expect(await countOf(lonely)).toBe(unresolved);
      expect(await opened.locks.holder(lockKey(opened.palace, { kind: 'sync', wing: 'syncw', projectDir: project, apply: true }))).toBeNull();
    });

    it('sync on a source root that is not the filesystem it was mined from (an unmounted volume with a placeholder) deletes nothing unless forced', async () => {
      // The volume's root, mined; then "unmounted": its content moves away and a bare directory
      // takes its path (another inode, as a mount point is), holding a placeholder with a mined file's name.
      const mount = path.join(tmp, 'volume');
      await fs.mkdir(mount);
      const names = Array.from({ length: 13 }, (_, i) => (i === 0 ? 'README.md' : `chapter${i}.md`));
      for (const [i, name] of names.entries())
        await fs.writeFile(path.join(mount, name),
          `Chapter ${i} of the volume: the harbour ledger, the storm log and the berth bookings of week ${i}.\n`.repeat(3));
      expect((await run(mineSpec(mount, 'volw'))).state).toBe('completed');
      const before = await opened.drawers.count({ wing: 'volw' });
      expect(before).toBe(13);
      // A palace mined before roots were recorded: the next mine records the root, even for unchanged files.
      const stored = names.map((n) => path.join(mount, n));
      const legacy = [...(await opened.drawers.fileStates('volw', stored)).values()].map((st) => ({ ...st,
        extra: Object.fromEntries(Object.entries(st.extra ?? {}).filter(([k]) => !k.startsWith('root'))) })
      );
      await opened.drawers.putFileStates(legacy);
      expect((await run(mineSpec(mount, 'volw'))).state).toBe('completed');
      const restamped = [...(await opened.drawers.fileStates('volw', stored)).values()];
      expect(restamped.map((st) => st.extra?.root)).toEqual(stored.map(() => mount));
      expect(restamped.every((st) => typeof st.extra?.root_ino === 'string' && typeof st.extra.root_dev === 'string')).toBe(true);
      await fs.rename(mount, `${mount}.away`);
      await fs.mkdir(mount);
      await fs.writeFile(path.join(mount, 'README.md'), 'placeholder of the mount point\n');

      const sync = (extra: Partial<Extract<JobSpec, { kind: 'sync' }>>) => run({ kind: 'sync', wing: 'volw', projectDir: mount, apply: false, ...extra });
      const applied = await sync({ apply: true });
      expect(applied.state).toBe('completed');
      expect(await opened.drawers.count({ wing: 'volw' })).toBe(before);
      expect(applied.result).toMatchObject({ success: true, dry_run: true, removed_drawers: 0, guard: { needs_force: true, stopped: true, forced: false } });

      const dry = await sync({});
      expect(dry.state).toBe('completed');
      const report = dry.result as { missing: number; dry_run: boolean;
        guard: { needs_force: boolean; stopped: boolean; reasons: { rule: string; source_root: string; removable_drawers: number; source_drawers: number }[];
          message: string } };
      expect(report.missing).toBe(12);
      expect(report.guard.needs_force).toBe(true);
      expect(report.guard.reasons).toEqual(
        expect.arrayContaining([expect.objectContaining({ rule: 'filesystem_changed', source_root: mount, removable_drawers: 12, source_drawers: 13 })]),
      );
      expect(report.guard.message).toContain('not the directory it was mined from');

      const forced = await sync({ apply: true, force: true });
      expect(forced.result).toMatchObject({ success: true, dry_run: false, removed_drawers: 12, guard: { needs_force: true, stopped: false, forced: true } });
      expect(await opened.drawers.count({ wing: 'volw' })).toBe(1);
    });

    it("sync that would delete most of a source's drawers deletes nothing unless forced; a few deletions go through", async () => {
      const project = path.join(tmp, 'massproj');
      await fs.mkdir(project);
      const files = Array.from({ length: 10 }, (_, i) => path.join(project, `page${i}.md`));
      for (const [i, f] of files.entries())
        await fs.writeFile(f, `Page ${i} of the manual: how the tide tables, the crane roster and the berth plan fit together in week ${i}.\n`.repeat(3));
      expect((await run(mineSpec(project, 'massw'))).state).toBe('completed');
      const sync = (extra: Partial<Extract<JobSpec, { kind: 'sync' }>>) => run({ kind: 'sync', wing: 'massw', projectDir: project, apply: true, ...extra });
      await fs.rm(files[0]!);
      await fs.rm(files[1]!);
      expect((await sync({})).result).toMatchObject({ dry_run: false, removed_drawers: 2 });
      expect(await opened.drawers.count({ wing: 'massw' })).toBe(8);

      for (const f of files.slice(2, 8)) await fs.rm(f);
      const stopped = await sync({});
      expect(await opened.drawers.count({ wing: 'massw' })).toBe(8);
      expect(stopped.result).toMatchObject({ dry_run: true, removed_drawers: 0, missing: 6,
        guard: { needs_force: true, stopped: true,
          reasons: [expect.objectContaining({ rule: 'mass_deletion', source_root: project, removable_drawers: 6, removable_files: 6, source_drawers: 8 })] } });
      expect(await opened.drawers.count({ wing: 'massw' })).toBe(8);
      expect((await sync({ force: true })).result).toMatchObject({ dry_run: false, removed_drawers: 6, guard: { forced: true } });
      expect(await opened.drawers.count({ wing: 'massw' })).toBe(2);
    });

    it('progress, wait and cancel of an unknown job are not_found naming job_id', async () => {
      for (const call of [() => engine.progress('no-such-job'), () => engine.wait('no-such-job', 1_000), () => engine.cancel('no-such-job')]) {
        const error = await call().then(() => undefined, (e: unknown) => e);
        expect(isPalaceError(error) && { code: error.code, field: error.field }).toEqual({ code: 'not_found', field: 'job_id' });
      }
    });
  });
}
