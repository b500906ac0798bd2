/**
 * The dashboard's job rows: each job's progress without its result, its rate over time for the
 * live chart, and a link to its Temporal workflow when the deployment names its Temporal UI
 * (`MEMPALACE_TEMPORAL_UI_URL`, cluster profile: a job is a workflow whose id is its lock key and
 * whose first run id is the job id).
 *
 * The rate series is read from the job's progress events in the job store (one per batch, on both
 * engines), so a page that connects midway still draws the job from its start; each point is the
 * files per second between two records, not the average since the start that `rate` is.
 */
import type { Config } from '../core/config.js';
import type { JobProgress } from '../jobs/job.js';
import type { JobStore } from '../stores/ports/job-store.js';

export interface RatePoint {
  at: string;
  /** Files per second since the record before. */
  rate: number;
}

export type DashboardJob = Omit<JobProgress, 'result'> & { rate_series?: RatePoint[]; workflow_url?: string };

/** Points kept per job: two hours of one-minute batches, far more than a chart is wide. */
const MAX_POINTS = 120;
const PAGE = 100;

interface Series {
  afterSeq: number;
  lastMs: number;
  lastSeen: number;
  points: RatePoint[];
  /** The job has ended and its last records are in. */
  done: boolean;
}

/** Link to the job's workflow in the Temporal UI, where there is one. */
export function workflowUrl(config: Pick<Config, 'profile' | 'temporal'>, job: Pick<JobProgress, 'job_id' | 'lock_key'>): string | undefined {
  const ui = config.temporal.uiUrl;
  if (!ui || config.profile !== 'cluster') return undefined;
  const part = encodeURIComponent;
  return `${ui}/namespaces/${part(config.temporal.namespace)}/workflows/${part(job.lock_key)}/${part(job.job_id)}/history`;
}

/**
 * The rate series of the jobs one dashboard stream shows: jobs seen running are followed (their
 * new progress events read at each refresh) until they end; jobs that leave the list are dropped.
 */
export class JobRates {
  private readonly series = new Map<string, Series>();

  constructor(private readonly events: JobStore<unknown, JobProgress>['events']) {}

  async update(jobs: readonly JobProgress[]): Promise<Map<string, RatePoint[]>> {
    const listed = new Set(jobs.map((j) => j.job_id));
    for (const id of this.series.keys()) if (!listed.has(id)) this.series.delete(id);
    const out = new Map<string, RatePoint[]>();
    for (const job of jobs) {
      let s = this.series.get(job.job_id);
      if (!s && job.state !== 'running') continue;
      if (!s) {
        s = { afterSeq: 0, lastMs: Date.parse(job.started_at), lastSeen: 0, points: [], done: false };
        this.series.set(job.job_id, s);
      }
      if (!s.done) await this.readNew(job.job_id, s);
      if (job.state !== 'running') s.done = true;
      out.set(job.job_id, s.points);
    }
    return out;
  }

  private async readNew(jobId: string, s: Series): Promise<void> {
    for (;;) {
      const rows = await this.events(jobId, s.afterSeq, PAGE);
      for (const { seq, progress } of rows) {
        s.afterSeq = seq;
        const atMs = Date.parse(progress.updated_at);
        if (!(atMs > s.lastMs)) continue;
        const rate = Math.max(0, progress.files_seen - s.lastSeen) / ((atMs - s.lastMs) / 1000);
        s.points.push({ at: progress.updated_at, rate: Math.round(rate * 100) / 100 });
        s.lastMs = atMs;
        s.lastSeen = progress.files_seen;
      }
      if (s.points.length > MAX_POINTS) s.points.splice(0, s.points.length - MAX_POINTS);
      if (rows.length < PAGE) return;
    }
  }
}

/** The rows of the dashboard's job table. */
export async function dashboardJobs(config: Pick<Config, 'profile' | 'temporal'>, jobs: readonly JobProgress[], rates: JobRates): Promise<DashboardJob[]> {
  const series = await rates.update(jobs);
  return jobs.map(({ result: _result, ...job }) => {
    const points = series.get(job.job_id);
    const url = workflowUrl(config, job);
    return { ...job, ...(points ? { rate_series: points } : {}), ...(url ? { workflow_url: url } : {}) };
  });
}
