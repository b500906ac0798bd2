/**
 * What the dashboard charts: the per-minute latency history (percentiles within one bucket of the
 * exact value, errors counted, an hour kept, empty minutes present) and a job's rate series read
 * from its progress events (points between records, followed until the job ends, dropped when it
 * leaves the list), and the Temporal UI link only where a job is a workflow.
 */
import { describe, expect, it } from 'vitest';
import { JobRates, dashboardJobs, workflowUrl } from '../../api/dashboard-jobs.js';
import { MetricsHistory } from '../../api/metrics-history.js';
import type { Config } from '../../core/config.js';
import type { JobProgress } from '../../jobs/job.js';
import { newProgress } from '../../jobs/progress.js';

const T0 = Date.parse('2026-01-01T10:00:00.000Z');

describe('metrics history', () => {
  it('gives p50/p95 within a bucket (20%) per minute, counts errors, keeps the last hour with empty minutes', () => {
    let now = T0 + 5_000;
    const h = new MetricsHistory(60, () => now);
    for (let ms = 1; ms <= 100; ms++) h.record('tools', ms / 1000, ms > 90);
    h.record('search', 0.25, false);
    const first = h.snapshot();
    expect(first).toHaveLength(60);
    expect(first.at(-1)!.at).toBe('2026-01-01T10:00:00.000Z');
    const tools = first.at(-1)!.tools;
    expect(tools).toMatchObject({ count: 100, errors: 10 });
    expect(tools.p50_ms! / 50).toBeGreaterThan(0.8);
    expect(tools.p50_ms! / 50).toBeLessThan(1.2);
    expect(tools.p95_ms! / 95).toBeGreaterThan(0.8);
    expect(tools.p95_ms! / 95).toBeLessThan(1.2);
    expect(first.at(-1)!.search.count).toBe(1);
    expect(first.at(-1)!.http).toEqual({ count: 0, errors: 0, p50_ms: null, p95_ms: null });
    expect(first[0]!.tools.count).toBe(0);

    now += 30 * 60_000;
    h.record('http', 0.002, true);
    const later = h.snapshot();
    expect(later.at(-31)!.tools.count).toBe(100);
    expect(later.at(-1)!.http).toMatchObject({ count: 1, errors: 1 });
    now += 31 * 60_000;
    expect(h.snapshot().some((m) => m.tools.count > 0)).toBe(false);
  });
});

function progress(at: number, seen: number, state: JobProgress['state'] = 'running'): JobProgress {
  return {
    ...newProgress({ jobId: 'job-1', kind: 'mine', lockKey: 'mempalace:p:source:abc', subject: { wing: 'w', trigger: 'user' } }, new Date(T0).toISOString()),
    updated_at: new Date(at).toISOString(),
    files_seen: seen,
    state,
  };
}

describe('job rate series', () => {
  it('draws files per second between records, reads only new events, stops after the end, drops jobs no longer listed', async () => {
    const events: { seq: number; progress: JobProgress }[] = [];
    const reads: number[] = [];
    const rates = new JobRates(async (_id, after, limit) => {
      reads.push(after);
      return events.filter((e) => e.seq > after).slice(0, limit);
    });
    events.push({ seq: 1, progress: progress(T0 + 2_000, 0) }, { seq: 2, progress: progress(T0 + 4_000, 64) });
    let series = await rates.update([events[1]!.progress]);
    expect(series.get('job-1')).toEqual([{ at: '2026-01-01T10:00:02.000Z', rate: 0 }, { at: '2026-01-01T10:00:04.000Z', rate: 32 }]);

    events.push({ seq: 3, progress: progress(T0 + 5_000, 128, 'completed') });
    series = await rates.update([events[2]!.progress]);
    expect(series.get('job-1')!.at(-1)).toEqual({ at: '2026-01-01T10:00:05.000Z', rate: 64 });
    expect(reads).toEqual([0, 2]);
    await rates.update([events[2]!.progress]);
    expect(reads).toEqual([0, 2]);

    expect((await rates.update([])).size).toBe(0);
    // A job first seen after its end has no series (nobody watched it run).
    expect((await rates.update([events[2]!.progress])).size).toBe(0);
  });

  it('links a job to its Temporal workflow only on the cluster profile with a UI URL', async () => {
    const job = progress(T0, 0);
    const cluster = { profile: 'cluster', temporal: { address: 'a', namespace: 'team ns', taskQueue: 'q', uiUrl: 'http://ui.test:8233' } } as Pick<Config,
      'profile' | 'temporal'>;
    expect(workflowUrl(cluster, job)).toBe('http://ui.test:8233/namespaces/team%20ns/workflows/mempalace%3Ap%3Asource%3Aabc/job-1/history');
    expect(workflowUrl({ ...cluster, profile: 'embedded' }, job)).toBeUndefined();
    expect(workflowUrl({ ...cluster, temporal: { ...cluster.temporal, uiUrl: undefined } }, job)).toBeUndefined();
    const rows = await dashboardJobs(cluster, [{ ...job, result: { big: true } }], new JobRates(async () => []));
    expect(rows[0]).not.toHaveProperty('result');
    expect(rows[0]).toMatchObject({ workflow_url: expect.stringContaining('/workflows/'), rate_series: [] });
  });
});
