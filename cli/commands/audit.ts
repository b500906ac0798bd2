/**
 * `mempalace audit verify`, `mempalace audit list` and `mempalace revert` (issue 28). Revert
 * opens the runtime itself rather than the audited view of `withRuntime`, because it writes its
 * own audit records (palace/audit/revert.ts); an interrupted revert resumes with `--resume <id>`.
 */
import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { openRuntime } from '../../app/runtime.js';
import type { AuditQuery } from '../../palace/audit/list.js';
import { auditInstant, listAudit } from '../../palace/audit/list.js';
import { runRevert } from '../../palace/audit/revert.js';
import { verifyAudit } from '../../palace/audit/verify.js';
import type { CliContext } from './context.js';
import { printJson, table } from '../output.js';

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

  program.command('revert').description("undo one agent's writes, newest first; later writes by others are reported as conflicts and kept")
    .requiredOption('--agent <agent>', 'whose writes').option('--session <session>').option('--since <instant>').option('--wing <wing>')
    .option('--dry-run', 'list what would change, change nothing').option('--resume <revert-id>', 'continue an interrupted revert')
    .action(async (o: RevertOptions) => {
      const config = ctx.config();
      const rt = await openRuntime(config);
      try {
        const revertId = o.resume ?? `revert_${randomUUID()}`;
        const outcome = await runRevert({ ...rt.stores, embedder: rt.embedder }, { agent: o.agent, session: o.session, since: auditInstant('since', o.since),
          wing: o.wing }, { revertId, dryRun: Boolean(o.dryRun),
          caller: { identity: config.audit.localAgent, transport: 'cli', action: 'cli revert', request_id: randomUUID(), session: config.audit.session } },
          (done, total) => process.stderr.write(`reverted ${done}/${total} records\r`));
        if (ctx.globals().json) printJson(outcome);
        else {
          console.log(`${outcome.dry_run ? 'Dry run: would revert' : 'Reverted'} ${outcome.records.length} records (${outcome.steps.length} items); `
            + `${outcome.already_reverted.length} already reverted; revert id ${outcome.revert_id}`);
          if (outcome.steps.length > 0) console.log(table(['record', 'item', 'action'], outcome.steps.map((s) => [String(s.seq), s.item, s.action])));
          if (outcome.conflicts.length > 0) {
            console.log('Conflicts (kept as the later writer left them):');
            console.log(
              table(['record', 'item', 'later record', 'by', 'action'],
                outcome.conflicts.map((c) => [String(c.seq), c.item, String(c.later_seq), c.later_identity, c.later_action])),
            );
          }
          for (const n of outcome.not_reverted) console.log(`record ${n.seq} (${n.op}) not reverted: ${n.reason}`);
        }
      } finally {
        await rt.close();
      }
    });
}
