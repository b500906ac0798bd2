/**
 * Jobs on Temporal (the cluster profile's JobEngine) against the real dev server and Redis, with
 * the real embedder: a mine of a git repository at a ref records the commit it mined. What every
 * engine does is the JobEngine contract (tests/contract/job-engine.contract.ts).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobProgress, JobSpec } from '../../jobs/job.js';
import type { ClusterTestStores } from './temporal-harness.js';
import { mineSpec, openEngine } from './temporal-harness.js';
import type { OpenTemporalRig } from '../helpers/temporal-rig.js';
import { openTemporalRig, runJob } from '../helpers/temporal-rig.js';
import { useEmbedderInTempDir } from '../helpers/real-embedder.js';

const fx = useEmbedderInTempDir('mempalace-temporal-');
let rig: OpenTemporalRig;
let stores: ClusterTestStores;

const run = (spec: JobSpec): Promise<JobProgress> => runJob(rig.engine, spec);

beforeAll(async () => {
  rig = await openTemporalRig({ dir: fx.tmp, label: 'jobs' });
  stores = rig.stores;
  await rig.runWorker(fx.embedder);
});

afterAll(async () => {
  await rig?.close();
});

describe('jobs on Temporal', () => {
  it('a mine of a git repository at a ref records the commit it mined', async () => {
    const bare = path.join(fx.tmp, 'repo.git');
    const clone = path.join(fx.tmp, 'repo-work');
    const git = (cwd: string, ...args: string[]) =>
      execFileSync('git', args, { cwd, encoding: 'utf8',
        env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't',
          GIT_COMMITTER_EMAIL: 't@example.invalid' } }).trim();
    await fs.mkdir(bare);
    git(bare, 'init', '--quiet', '--bare', '--initial-branch=main');
    git(fx.tmp, 'clone', '--quiet', bare, clone);
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
    const done = await run(mineSpec(url, 'gitw', { source: { kind: 'git', url, ref: 'main' } }));
    expect(done.state).toBe('completed');
    expect((done.result as { commit: string }).commit).toBe(second);
    const page = await stores.drawers.list({ wing: 'gitw' }, 0, 100);
    expect(page.items.map((d) => d.meta.source_file).sort()).toEqual([`${url}:first.md`, `${url}:second.md`]);
    for (const d of page.items) expect(d.meta.source_commit).toBe(second);

    // An older ref mines that commit's tree and records that commit (second.md is not in it).
    const older = await run(mineSpec(url, 'gitold', { source: { kind: 'git', url, ref: first } }));
    expect((older.result as { commit: string }).commit).toBe(first);
    const olderPage = await stores.drawers.list({ wing: 'gitold' }, 0, 100);
    expect(olderPage.items.map((d) => [d.meta.source_file, d.meta.source_commit])).toEqual([[`${url}:first.md`, first]]);
  });

  it('a start on a source whose job has ended waits for that workflow to close, then starts', async () => {
    // No worker polls this queue: the first job's workflow stays open until the test ends it, as
    // one does between its last activity (which writes the final record) and its last task.
    const idle = await openEngine(stores, `tq-idle-${stores.palaceName}`);
    const dir = await fs.mkdtemp(path.join(fx.tmp, 'ended-'));
    const spec = mineSpec(dir, 'ended');
    try {
      const first = await idle.start(spec);
      await stores.jobs.update(first.job_id, 'completed', { ...first, state: 'completed' });
      const workflows = idle.temporalClient.workflow;
      const closing = new Promise((resolve) => setTimeout(resolve, 7_000)).then(() => workflows.getHandle(first.lock_key).terminate('closed by the test'));
      const second = await idle.start(spec);
      await closing;
      expect(second.state).toBe('running');
      expect(second.job_id).not.toBe(first.job_id);
      expect(second.lock_key).toBe(first.lock_key);
      expect((await workflows.getHandle(second.lock_key).describe()).runId).toBe(second.job_id);
      await workflows.getHandle(second.lock_key).terminate('test over');
    } finally {
      await idle.close();
    }
  });
});
