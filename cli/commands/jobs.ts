/**
 * `mempalace jobs list|show|cancel|watch`: the jobs of the palace (mine, sync, delete_by_source, reembed, revert)
 * through the JobEngine port — the local runner's SQLite records or Temporal's workflows. `watch`
 * (and every command that starts a job) follows it with a live progress bar on a terminal, one
 * line per change otherwise.
 */
import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import type { JobProgress } from '../../jobs/job.js';
import { printJson, table } from '../output.js';
import type { Runtime } from '../../palace/runtime.js';
import type { CliContext } from './context.js';

export function progressLine(p: JobProgress): string {
  const eta = p.eta_s === null ? '?' : `${p.eta_s}s`;
  return `${p.files_seen}/${p.files_total} files · ${p.drawers_written} drawers · ${p.files_skipped} skipped · ${p.rate} files/s · ETA ${eta}`;
}

/** Follows a job to its end (Ctrl-C cancels it); progress goes to stderr, never stdout. */
export async function watchJob(rt: Runtime, jobId: string, json: boolean): Promise<JobProgress> {
  const bar = json || !process.stderr.isTTY
    ? undefined
    : new cliProgress.SingleBar({ format: '{kind} [{bar}] {line}', hideCursor: true, stream: process.stderr }, cliProgress.Presets.shades_classic);
  bar?.start(1, 0, { kind: 'job', line: 'starting…' });
  let last = '';
  const onProgress = (p: JobProgress) => {
    if (bar) {
      bar.setTotal(Math.max(1, p.files_total));
      bar.update(p.files_seen, { kind: p.kind, line: progressLine(p) });
    } else if (!json) {
      const line = `${p.kind} ${p.state}: ${progressLine(p)}`;
      if (line !== last) process.stderr.write(`${line}\n`);
      last = line;
    }
  };
  const onSignal = () => {
    void rt.jobs.cancel(jobId);
  };
  process.once('SIGINT', onSignal);
  try {
    return await rt.jobs.wait(jobId, 24 * 3600 * 1000, onProgress);
  } finally {
    process.off('SIGINT', onSignal);
    bar?.stop();
  }
}

/**
 * What a job works on, in one cell: source (and git ref) and mine mode, or the agent, session and
 * instant whose writes a revert undoes; records older than these fields have none.
 */
function subjectCell(j: JobProgress): string {
  const source = j.source === undefined ? '' : j.ref === undefined ? j.source : `${j.source} @ ${j.ref}`;
  const reverted = [j.agent && `agent ${j.agent}`, j.session && `session ${j.session}`, j.since && `since ${j.since}`];
  return [source, j.mode, ...reverted].filter(Boolean).join(' · ');
}

function jobRows(jobs: JobProgress[]): (string | number)[][] {
  return jobs.map((
    j,
  ) => [j.job_id, j.kind, subjectCell(j), j.wing ?? '', j.trigger ?? '', j.state, `${j.files_seen}/${j.files_total}`, j.drawers_written, j.started_at ?? '']);
}

export function registerJobCommands(program: Command, ctx: CliContext): void {
  const jobs = program.command('jobs').description('mine, sync, delete_by_source, reembed and revert jobs');
  const json = () => Boolean(ctx.globals().json);
  jobs.command('list').option('--limit <n>', 'most recent n jobs', '20').action((o: { limit: string }) =>
    ctx.withRuntime(async (rt) => {
      const list = await rt.jobs.list(ctx.intOption('limit', o.limit));
      if (json()) return printJson({ jobs: list, count: list.length });
      console.log(list.length === 0 ? 'No jobs.' : table(['job', 'kind', 'source', 'wing', 'trigger', 'state', 'files', 'drawers', 'started'], jobRows(list)));
    })
  );
  jobs.command('show').argument('<job-id>').action((id: string) =>
    ctx.withRuntime(async (rt) => {
      const p = await rt.jobs.progress(id);
      if (json()) return printJson(p);
      const subject = [subjectCell(p), p.wing ? `wing ${p.wing}` : '', p.trigger ? `started by ${p.trigger}` : ''].filter(Boolean).join(' · ');
      console.log(`${p.kind} ${p.state}: ${progressLine(p)}${subject ? `\non: ${subject}` : ''}${p.error ? `\nerror: ${p.error}` : ''}`);
    })
  );
  jobs.command('cancel').argument('<job-id>').action((id: string) =>
    ctx.withRuntime(async (rt) => {
      const p = await rt.jobs.cancel(id);
      if (json()) return printJson(p);
      console.log(`${p.job_id}: ${p.state}`);
    })
  );
  jobs.command('watch').argument('<job-id>').description('follow a job with a live progress bar until it ends').action((id: string) =>
    ctx.withRuntime(async (rt) => {
      const final = await watchJob(rt, id, json());
      if (json()) printJson(final);
      else console.log(`${final.kind} ${final.state}: ${progressLine(final)}${final.error ? `\nerror: ${final.error}` : ''}`);
      if (final.state === 'failed') process.exitCode = 1;
      if (final.state === 'cancelled') process.exitCode = 130;
    })
  );
}
