/**
 * Jobs on the embedded profile: crash and resume, cancel, sync and delete_by_source, with the
 * in-process runner, real files, the real embedder and SQLite.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import { MiniLmEmbedder } from '../../embed/minilm.js';
import type { JobProgress, JobSpec, MineSpec } from '../../palace/jobs.js';
import type { Runtime } from '../../palace/runtime.js';
import { openRuntime } from '../../app/runtime.js';
import { generateProject } from '../fixtures/generate-project.js';

let tmp: string;
let embedder: MiniLmEmbedder;

const mineSpec = (source: string, wing: string): MineSpec => ({
  kind: 'mine', source: { kind: 'dir', path: source }, mode: 'projects', wing, agent: 'crash-test', limit: 0,
  dryRun: false, extract: 'exchange', respectGitignore: true, includeIgnored: [],
});

async function runtimeAt(palace: string): Promise<Runtime> {
  return openRuntime(loadConfig({ ...process.env, MEMPALACE_PALACE: palace, MEMPALACE_JOB_LEASE_MS: '8000' }), { embedder });
}

async function run(rt: Runtime, spec: JobSpec): Promise<JobProgress> {
  const started = await rt.jobs.start(spec);
  return rt.jobs.wait(started.job_id, 300_000);
}

async function ids(rt: Runtime, wing: string): Promise<string[]> {
  const out: string[] = [];
  for (let offset = 0; ; offset += 5000) {
    const page = await rt.stores.drawers.list({ wing }, offset, 5000);
    out.push(...page.items.map((d) => d.id));
    if (offset + 5000 >= page.total) return out.sort();
  }
}

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mempalace-jobs-'));
  embedder = new MiniLmEmbedder(loadConfig());
});

afterAll(async () => {
  await embedder?.close();
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('jobs on the embedded profile', () => {
  it('a mine killed with SIGKILL mid-run resumes and ends with the same drawers as a clean run', async () => {
    const source = path.join(tmp, 'big');
    await generateProject(source, 260, 7);
    const clean = await runtimeAt(path.join(tmp, 'palace-clean'));
    const cleanRun = await run(clean, mineSpec(source, 'big'));
    expect(cleanRun.state).toBe('completed');
    const expected = await ids(clean, 'big');
    await clean.close();

    const palace = path.join(tmp, 'palace-crash');
    const child = spawn(process.execPath, ['--import', 'tsx', 'tests/fixtures/mine-child.ts', palace, source, 'big'], { env: { ...process.env, MEMPALACE_JOB_LEASE_MS: '8000' }, stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        const m = /progress (\d+) (\d+)/.exec(chunk.toString());
        if (m && Number(m[1]) >= 128 && Number(m[1]) < Number(m[2])) {
          child.kill('SIGKILL');
          resolve();
        }
      });
      child.on('exit', () => resolve());
      child.on('error', reject);
    });
    await new Promise((r) => child.once('exit', r).once('close', r) && setTimeout(r, 500));
    const rt = await runtimeAt(palace);
    try {
      const before = await ids(rt, 'big');
      expect(before.length).toBeGreaterThan(0);
      expect(before.length).toBeLessThan(expected.length);
      const stale = (await rt.jobs.list(5)).find((j) => j.state === 'running');
      expect(stale).toBeDefined();
      await new Promise((r) => setTimeout(r, 8500)); // the dead runner's lease expires
      const resumed = await rt.jobs.start(mineSpec(source, 'big'));
      expect(resumed.job_id).toBe(stale!.job_id);
      const done = await rt.jobs.wait(resumed.job_id, 300_000);
      expect(done.state).toBe('completed');
      expect(await ids(rt, 'big')).toEqual(expected);
    } finally {
      await rt.close();
    }
  });

  it('cancelling a running mine stops within the window of batches, releases the lock and reports partial progress', async () => {
    const source = path.join(tmp, 'cancel');
    await generateProject(source, 260, 11);
    const rt = await runtimeAt(path.join(tmp, 'palace-cancel'));
    try {
      const started = await rt.jobs.start(mineSpec(source, 'cancel'));
      let seen = 0;
      for (;;) {
        const p = await rt.jobs.progress(started.job_id);
        seen = p.files_seen;
        if (seen >= 64 || p.state !== 'running') break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const cancelled = await rt.jobs.cancel(started.job_id);
      expect(cancelled.state).toBe('cancelled');
      expect(cancelled.files_seen).toBeLessThan(260);
      // Within the window: the runner's default of two 64-file batches in flight.
      expect(cancelled.files_seen - seen).toBeLessThanOrEqual(2 * 64);
      expect(String((cancelled.result as { output: string }).output)).toContain('Cancelled after');
      const again = await rt.jobs.start(mineSpec(source, 'cancel'));
      expect((await rt.jobs.wait(again.job_id, 300_000)).state).toBe('completed');
    } finally {
      await rt.close();
    }
  });

  it('sync reports and removes exactly the deleted and gitignored files, keeping unresolved ones', async () => {
    const project = path.join(tmp, 'syncproj');
    const files = await generateProject(project, 30, 3);
    await fs.writeFile(path.join(project, '.gitignore'), '');
    await fs.mkdir(path.join(project, 'lonely'));
    await fs.writeFile(path.join(project, 'lonely', 'only.md'), 'The only file of a directory that will vanish entirely with its folder. '.repeat(4));
    const rt = await runtimeAt(path.join(tmp, 'palace-sync'));
    try {
      expect((await run(rt, mineSpec(project, 'syncw'))).state).toBe('completed');
      const deleted = files.slice(0, 2);
      const ignored = files[5]!;
      for (const f of deleted) await fs.rm(f);
      await fs.writeFile(path.join(project, '.gitignore'), `${path.relative(project, ignored)}\n`);
      await fs.rm(path.join(project, 'lonely'), { recursive: true });
      const countOf = async (f: string) => rt.stores.drawers.count({ wing: 'syncw', sourceFile: f });
      const expectedRemoved = (await Promise.all([...deleted, ignored].map(countOf))).reduce((a, b) => a + b, 0);

      const dry = await run(rt, { kind: 'sync', wing: 'syncw', projectDir: project, apply: false });
      const report = dry.result as Record<string, unknown> & { by_source: Record<string, number>; unresolved_by_source: Record<string, number> };
      expect(report.dry_run).toBe(true);
      expect(Object.keys(report.by_source).sort()).toEqual([...deleted, ignored].sort());
      expect(report.missing).toBe((await Promise.all(deleted.map(countOf))).reduce((a, b) => a + b, 0));
      expect(report.gitignored).toBe(await countOf(ignored));
      expect(Object.keys(report.unresolved_by_source)).toEqual([path.join(project, 'lonely', 'only.md')]);
      expect(report.removed_drawers).toBe(0);

      const before = await rt.stores.drawers.count({ wing: 'syncw' });
      const applied = await run(rt, { kind: 'sync', wing: 'syncw', projectDir: project, apply: true });
      expect((applied.result as { removed_drawers: number }).removed_drawers).toBe(expectedRemoved);
      expect(await rt.stores.drawers.count({ wing: 'syncw' })).toBe(before - expectedRemoved);
      for (const f of [...deleted, ignored]) expect(await countOf(f)).toBe(0);
      expect(await countOf(path.join(project, 'lonely', 'only.md'))).toBeGreaterThan(0);
    } finally {
      await rt.close();
    }
  });

  it('delete_by_source counts and samples on a dry run, then deletes exactly that source', async () => {
    const project = path.join(tmp, 'delproj');
    const files = await generateProject(project, 6, 5);
    const rt = await runtimeAt(path.join(tmp, 'palace-del'));
    try {
      await run(rt, mineSpec(project, 'delw'));
      const target = files[0]!;
      const rows = await rt.stores.drawers.count({ sourceFile: target });
      expect(rows).toBeGreaterThan(0);
      const dry = (await run(rt, { kind: 'delete_by_source', sourceFile: target, dryRun: true })).result as Record<string, unknown>;
      expect(dry).toMatchObject({ success: true, dry_run: true, source_file: target, match_count: rows, match_rows: rows });
      expect(dry.sample).toEqual([{ wing: 'delw', room: expect.any(String) }]);
      expect(await rt.stores.drawers.count({ sourceFile: target })).toBe(rows);
      const total = await rt.stores.drawers.count({ wing: 'delw' });
      const applied = (await run(rt, { kind: 'delete_by_source', sourceFile: target, dryRun: false })).result as Record<string, unknown>;
      expect(applied).toMatchObject({ success: true, dry_run: false, deleted: rows });
      expect(await rt.stores.drawers.count({ sourceFile: target })).toBe(0);
      expect(await rt.stores.drawers.count({ wing: 'delw' })).toBe(total - rows);
      const noop = (await run(rt, { kind: 'delete_by_source', sourceFile: target, dryRun: false })).result as Record<string, unknown>;
      expect(noop).toEqual({ success: true, dry_run: false, source_file: target, deleted: 0 });
    } finally {
      await rt.close();
    }
  });
});
