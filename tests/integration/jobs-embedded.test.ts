/**
 * Jobs on the embedded profile that only the in-process runner has: a mine whose process is
 * killed resumes from its stored cursor. What every engine does (counts, conflicts, cancel, dry
 * runs, sync, delete_by_source) is the JobEngine contract (tests/contract/job-engine.contract.ts).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import type { JobProgress, JobSpec, MineSpec } from '../../jobs/job.js';
import type { Runtime } from '../../palace/runtime.js';
import { openRuntime } from '../../app/runtime.js';
import { generateProject } from '../fixtures/generate-project.js';
import { dirMineSpec } from '../helpers/mine-spec.js';
import { useEmbedderInTempDir } from '../helpers/real-embedder.js';

const fx = useEmbedderInTempDir('mempalace-jobs-');

const mineSpec = (source: string, wing: string): MineSpec => dirMineSpec(source, wing, 'crash-test');

async function runtimeAt(palace: string): Promise<Runtime> {
  return openRuntime(loadConfig({ ...process.env, MEMPALACE_PALACE: palace, MEMPALACE_JOB_LEASE_MS: '8000' }), { embedder: fx.embedder });
}

async function run(rt: Runtime, spec: JobSpec): Promise<JobProgress> {
  const started = await rt.jobs.start(spec);
  return rt.jobs.wait(started.job_id, 300_000);
}

async function ids(rt: Runtime, wing: string): Promise<string[]> {
  const out: string[] = [];
  for (let offset = 0;; offset += 5000) {
    const page = await rt.stores.drawers.list({ wing }, offset, 5000);
    out.push(...page.items.map((d) => d.id));
    if (offset + 5000 >= page.total) return out.sort();
  }
}

beforeAll(async () => {
});

describe('jobs on the embedded profile', () => {
  it('a mine killed with SIGKILL mid-run resumes and ends with the same drawers as a clean run', async () => {
    const source = path.join(fx.tmp, 'big');
    await generateProject(source, 260, 7);
    const clean = await runtimeAt(path.join(fx.tmp, 'palace-clean'));
    const cleanRun = await run(clean, mineSpec(source, 'big'));
    expect(cleanRun.state).toBe('completed');
    const expected = await ids(clean, 'big');
    await clean.close();

    const palace = path.join(fx.tmp, 'palace-crash');
    const child = spawn(process.execPath, ['--import', 'tsx', 'tests/fixtures/mine-child.ts', palace, source, 'big'], {
      env: { ...process.env, MEMPALACE_JOB_LEASE_MS: '8000' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
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
});
