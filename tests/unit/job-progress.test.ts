/**
 * The progress record both job engines keep: which specs write (and so lock), the dry-run lock
 * key, the first record (new or resumed), rate and ETA after a batch, the final record, failures.
 */
import { describe, expect, it } from 'vitest';
import { advanceProgress, emptyCounters, failureFields, finishProgress, jobSubject, newJobRecord, newProgress } from '../../jobs/progress.js';
import { specWrites } from '../../jobs/job.js';
import type { JobSpec, MineSpec } from '../../jobs/job.js';
import { jobLockKey, lockKey, waitForJob } from '../../jobs/job.js';

const mine = (dryRun: boolean): MineSpec => ({
  kind: 'mine',
  source: { kind: 'dir', path: '/data/src' },
  mode: 'projects',
  agent: 'a',
  limit: 0,
  dryRun,
  extract: 'exchange',
  respectGitignore: true,
  includeIgnored: [],
});

describe('job progress', () => {
  it('only dry runs write nothing', () => {
    const cases: [JobSpec, boolean][] = [
      [mine(false), true],
      [mine(true), false],
      [{ kind: 'sync', wing: 'w', apply: true }, true],
      [{ kind: 'sync', wing: 'w', apply: false }, false],
      [{ kind: 'delete_by_source', sourceFile: '/f', dryRun: false }, true],
      [{ kind: 'delete_by_source', sourceFile: '/f', dryRun: true }, false],
      [{ kind: 'reembed', model: 'm' }, true],
    ];
    for (const [spec, writes] of cases) expect(specWrites(spec), JSON.stringify(spec)).toBe(writes);
  });

  it('a writing job locks its source; a dry run gets a key of its own per run', () => {
    expect(jobLockKey('p', mine(false), 'run-1')).toBe(lockKey('p', mine(false)));
    expect(jobLockKey('p', mine(true), 'run-1')).toBe(`${lockKey('p', mine(true))}:dry:run-1`);
    expect(jobLockKey('p', mine(true), 'run-2')).not.toBe(jobLockKey('p', mine(true), 'run-1'));
  });

  it('a new record starts at zero; a resumed one keeps its start time and counters', () => {
    const fresh = newProgress({ jobId: 'j', kind: 'mine', lockKey: 'k' }, '2026-03-01T10:00:00.000Z');
    expect(fresh).toEqual({
      job_id: 'j',
      kind: 'mine',
      lock_key: 'k',
      state: 'running',
      started_at: '2026-03-01T10:00:00.000Z',
      updated_at: '2026-03-01T10:00:00.000Z',
      rate: 0,
      eta_s: null,
      recent_errors: [],
      ...emptyCounters(),
    });
    const counters = { ...emptyCounters(), files_total: 10, files_seen: 4 };
    const resumed = newProgress({ jobId: 'j', kind: 'mine', lockKey: 'k' }, '2026-03-01T10:05:00.000Z', {
      startedAt: '2026-03-01T10:00:00.000Z',
      step: { counters, recentErrors: [{ file: 'a', error: 'e' }], lastFile: 'b' },
    });
    expect(resumed).toMatchObject({ started_at: '2026-03-01T10:00:00.000Z', updated_at: '2026-03-01T10:05:00.000Z', files_seen: 4, files_total: 10,
      last_file: 'b', recent_errors: [{ file: 'a', error: 'e' }] });
    expect(newJobRecord(mine(false), fresh)).toEqual({
      job_id: 'j',
      kind: 'mine',
      lock_key: 'k',
      state: 'running',
      spec: mine(false),
      progress: fresh,
      created_at: fresh.started_at,
      updated_at: fresh.updated_at,
    });
  });

  it('rate and ETA are measured from the job start', () => {
    const start = newProgress({ jobId: 'j', kind: 'mine', lockKey: 'k' }, '2026-03-01T10:00:00.000Z');
    const counters = { ...emptyCounters(), files_total: 100, files_seen: 30 };
    const after = advanceProgress(start, { counters, recentErrors: [] }, Date.parse('2026-03-01T10:00:10.000Z'));
    expect(after).toMatchObject({ state: 'running', files_seen: 30, rate: 3, eta_s: 23, updated_at: '2026-03-01T10:00:10.000Z' });
    expect(after.last_file).toBeUndefined();
    const idle = advanceProgress(start, { counters: { ...emptyCounters(), files_total: 100 }, recentErrors: [] }, Date.parse('2026-03-01T10:00:10.000Z'));
    expect(idle).toMatchObject({ rate: 0, eta_s: null });
  });

  it('the final record has its state, end time, no ETA; a failure names its class when known', () => {
    const start = newProgress({ jobId: 'j', kind: 'sync', lockKey: 'k' }, '2026-03-01T10:00:00.000Z');
    const done = finishProgress(start, 'failed', failureFields('boom', 'store_unavailable'), '2026-03-01T10:01:00.000Z');
    expect(done).toMatchObject({
      state: 'failed',
      finished_at: '2026-03-01T10:01:00.000Z',
      updated_at: '2026-03-01T10:01:00.000Z',
      eta_s: 0,
      error: 'boom',
      result: { success: false, error: 'boom', error_class: 'store_unavailable' },
    });
    expect(failureFields('boom')).toEqual({ error: 'boom', result: { success: false, error: 'boom' } });
  });

  it('wait tells each new record once and returns at the end or the deadline', async () => {
    const records = ['a', 'a', 'b'].map((u, i) => ({ ...newProgress({ jobId: 'j', kind: 'mine', lockKey: 'k' }, u),
      state: i === 2 ? 'completed' as const : 'running' as const })
    );
    let n = 0;
    const seen: string[] = [];
    const end = await waitForJob(async () => records[Math.min(n++, 2)]!, 60_000, 1, (p) => seen.push(p.updated_at));
    expect(end.state).toBe('completed');
    expect(seen).toEqual(['a', 'b']);
    const still = await waitForJob(async () => records[0]!, 5, 1);
    expect(still.state).toBe('running');
  });

  it('a record carries what its job works on and what started it from the start to the end, and a record without them still reads', () => {
    const git: MineSpec = { ...mine(false), source: { kind: 'git', url: 'https://git.example.test/r.git', ref: 'main' }, wing: 'w', mode: 'convos' };
    expect(jobSubject(mine(false))).toEqual({ source: '/data/src', mode: 'projects', trigger: 'user' });
    expect(jobSubject(git)).toEqual({ source: 'https://git.example.test/r.git', ref: 'main', wing: 'w', mode: 'convos', trigger: 'user' });
    expect(jobSubject({ ...git, trigger: 'webhook' }).trigger).toBe('webhook');
    expect(jobSubject({ ...git, trigger: 'refresh' }).trigger).toBe('refresh');
    expect(jobSubject({ kind: 'sync', wing: 'w', projectDir: '/p', apply: false })).toEqual({ source: '/p', wing: 'w', trigger: 'user' });
    expect(jobSubject({ kind: 'sync', apply: false })).toEqual({ trigger: 'user' });
    expect(jobSubject({ kind: 'delete_by_source', sourceFile: '/f.md', dryRun: true })).toEqual({ source: '/f.md', trigger: 'user' });
    expect(jobSubject({ kind: 'reembed', model: 'm' })).toEqual({ trigger: 'user' });
    const started = newProgress({ jobId: 'j', kind: 'mine', lockKey: 'k', subject: jobSubject(git) }, '2026-01-01T00:00:00.000Z');
    const advanced = advanceProgress(started, { counters: emptyCounters(), recentErrors: [] }, Date.parse('2026-01-01T00:00:01.000Z'));
    const finished = finishProgress(advanced, 'completed', {}, '2026-01-01T00:00:02.000Z');
    expect(finished).toMatchObject({ source: 'https://git.example.test/r.git', ref: 'main', wing: 'w', mode: 'convos', trigger: 'user' });
    expect(newJobRecord(git, started).progress).toMatchObject(jobSubject(git));
    const old = newProgress({ jobId: 'j', kind: 'mine', lockKey: 'k' }, '2026-01-01T00:00:00.000Z');
    expect(old).not.toHaveProperty('source');
    expect(old).not.toHaveProperty('trigger');
    expect(finishProgress(old, 'completed', {}, '2026-01-01T00:00:02.000Z').source).toBeUndefined();
  });
});
