/**
 * `mempalace audit verify`, `mempalace audit list` and `mempalace revert` (issue 28). A revert
 * runs as a job (jobs/revert/) and is followed to its end like a mine; the job writes its own
 * audit records with the stores themselves, its start is recorded through the audited view. An
 * interrupted revert goes on when the same command runs again (its id is the selection's), or
 * with `--resume <id>`. A dry run writes nothing and is answered here, without a job.
 */
import type { Command } from 'commander';
import type { JobProgress } from '../../jobs/job.js';
import { parseRevertRequest } from '../../jobs/requests.js';
import type { AuditQuery } from '../../palace/audit/list.js';
import { auditInstant, listAudit } from '../../palace/audit/list.js';
import type { RevertConflict, RevertPlan } from '../../palace/audit/revert.js';
import { planRevert } from '../../palace/audit/revert.js';
import { verifyAudit } from '../../palace/audit/verify.js';
import type { CliContext } from './context.js';
import { printJson, table } from '../output.js';
import { watchJob } from './jobs.js';

/** The trail's filter as options: the limit arrives as text. */
type ListOptions = Omit<AuditQuery, 'limit'> & { limit: string };

interface RevertOptions {
  agent: string;
  session?: string;
  since?: string;
  wing?: string;
  dryRun?: boolean;
  resume?: string;
}

export function registerAuditCommands(program: Command, ctx: CliContext): void {
  const audit = program.command('audit').description('the hash-chained trail of every write');
  audit.command('verify').description('check every link of the trail: exit 1 when a record was removed or changed').action(() =>
    ctx.withRuntime(async (rt) => {
      const result = await verifyAudit(rt.stores.audit);
      if (ctx.globals().json) printJson(result);
      else {
        console.log(result.ok
          ? `ok: ${result.records} records, from anchor ${result.anchor.seq} to head ${result.head.seq}`
          : `FAILED: ${result.problems.length} problems in ${result.records} records`);
        for (const p of result.problems) console.log(`  record ${p.seq}: ${p.kind}: ${p.message}`);
      }
      if (!result.ok) process.exitCode = 1;
    })
  );
  audit.command('list').description('records, newest first')
    .option('--identity <agent>').option('--wing <wing>').option('--tool <tool>', 'tool or route as recorded').option('--session <session>')
    .option('--since <instant>').option('--until <instant>').option('--limit <n>', 'at most n records', '50')
    .action((o: ListOptions) =>
      ctx.withRuntime(async (rt) => {
        const records = await listAudit(rt.stores.audit, { identity: o.identity, wing: o.wing, tool: o.tool, session: o.session,
          since: auditInstant('since', o.since), until: auditInstant('until', o.until), limit: ctx.intOption('limit', o.limit) });
        if (ctx.globals().json) printJson({ records });
        else console.log(
            table(['seq', 'at', 'identity', 'action', 'op', 'wings', 'ids'], records.map((
              r,
            ) => [String(r.seq), r.at, r.identity, r.action, r.op, r.wings.join(','), r.ids.slice(0, 3).join(',') + (r.ids.length > 3 ? ',…' : '')])),
          );
      })
    );

  program.command('revert').description("undo one agent's writes, newest first, as a job; later writes by others are reported as conflicts and kept")
    .requiredOption('--agent <agent>', 'whose writes').option('--session <session>').option('--since <instant>').option('--wing <wing>')
    .option('--dry-run', 'list what would change, change nothing (no job)')
    .option('--resume <revert-id>', 'go on with the revert of this id (default: the id of this selection, so the same command goes on)')
    .action(async (o: RevertOptions) => {
      const config = ctx.config();
      // Checked before the runtime opens: a refused request starts nothing and writes nothing.
      const request = Object.fromEntries(
        Object.entries({ agent: o.agent, session: o.session, since: o.since, wing: o.wing, dry_run: o.dryRun, revert_id: o.resume }).filter(([, v]) =>
          v !== undefined
        ),
      );
      const { spec, dryRun } = parseRevertRequest(request, { identity: config.audit.localAgent, transport: 'cli', action: 'cli revert',
        session: config.audit.session });
      await ctx.withRuntime(async (rt) => {
        if (dryRun) return printDryRun(await planRevert(rt.stores, spec, spec.revertId), spec.revertId, Boolean(ctx.globals().json));
        const final = await watchJob(rt, (await rt.jobs.start(spec)).job_id, Boolean(ctx.globals().json));
        printRevertJob(final, Boolean(ctx.globals().json));
      });
    });
}

function printDryRun(plan: RevertPlan, revertId: string, json: boolean): void {
  if (json) return printJson({ ...plan, revert_id: revertId, dry_run: true });
  console.log(`Dry run: would revert ${plan.records.length} records (${plan.steps.length} items); ${plan.already_reverted.length} already reverted; `
    + `revert id ${revertId}`);
  if (plan.steps.length > 0) console.log(table(['record', 'item', 'action'], plan.steps.map((s) => [String(s.seq), s.item, s.action])));
  printConflicts(plan.conflicts);
  for (const n of plan.not_reverted) console.log(`record ${n.seq} (${n.op}) not reverted: ${n.reason}`);
}

function printConflicts(conflicts: RevertConflict[]): void {
  if (conflicts.length === 0) return;
  console.log('Conflicts (kept as the later writer left them):');
  console.log(
    table(['record', 'item', 'later record', 'by', 'action'],
      conflicts.map((c) => [String(c.seq), c.item, String(c.later_seq), c.later_identity, c.later_action])),
  );
}

/** The end of a revert job: its summary (the first conflicts; the trail holds every one) and the exit code. */
function printRevertJob(final: JobProgress, json: boolean): void {
  const result = final.result as
    | { output?: string; conflicts?: RevertConflict[]; conflicts_total?: number; not_reverted?: RevertPlan['not_reverted'] }
    | undefined;
  if (json) printJson(final);
  else {
    console.log(result?.output ?? final.error ?? final.state);
    printConflicts(result?.conflicts ?? []);
    if ((result?.conflicts_total ?? 0) > (result?.conflicts?.length ?? 0)) console.log(`… ${result!.conflicts_total} conflicts in all (mempalace audit list)`);
    for (const n of result?.not_reverted ?? []) console.log(`record ${n.seq} (${n.op}) not reverted: ${n.reason}`);
  }
  if (final.state === 'failed') process.exitCode = 1;
  if (final.state === 'cancelled') process.exitCode = 130;
}
