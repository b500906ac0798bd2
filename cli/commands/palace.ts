/**
 * CLI faces of the palace tools: the knowledge graph, tunnels, hallways, traversal, diaries,
 * drawers, sync and delete-by-source. Each command maps its arguments to one tool call (see
 * cli/tool-call.ts); numbers are passed as typed and checked by the tool's schema.
 */
import type { Command } from 'commander';
import { Option } from 'commander';
import type { Static, TObject, TSchema } from 'typebox';
import { diaryReadOperation, diaryWriteOperation } from '../../palace/diary/diary.js';
import { deleteHallwayOperation, listHallwaysOperation } from '../../palace/graph/hallways.js';
import { traverseOperation } from '../../palace/graph/room-graph.js';
import { createTunnelOperation, deleteTunnelOperation, followTunnelsOperation, listTunnelsOperation } from '../../palace/graph/tunnels.js';
import { kgAddOperation, kgInvalidateOperation, kgQueryOperation, kgStatsOperation, kgSupersedeOperation, kgTimelineOperation } from '../../palace/kg/kg.js';
import type { Operation } from '../../palace/operation.js';
import { callTool, printResult } from '../tool-call.js';
import type { CliContext } from './context.js';
import { mempalaceHome } from './hooks.js';
import { watchJob } from './jobs.js';

const DIRECTIONS = { in: 'incoming', out: 'outgoing', both: 'both', incoming: 'incoming', outgoing: 'outgoing' } as const;

/** A command's arguments to an operation: the fields of its input, numbers as typed on the command line (the tool call coerces them). */
type CommandArgs<In extends TObject> = { [K in keyof Static<In>]?: Static<In>[K] | (number extends Static<In>[K] ? string : never) };

export function registerPalaceCommands(program: Command, ctx: CliContext): void {
  const run = (name: string, args: Record<string, unknown>) =>
    ctx.withRuntime(async (rt) => printResult(await callTool(rt, mempalaceHome(), name, args), Boolean(ctx.globals().json)));

  /** An operation's command: its arguments are checked against the operation's declared input fields. */
  const runOperation = <In extends TObject, Out extends TSchema, Ctx, Options>(op: Operation<In, Out, Ctx, Options>, args: CommandArgs<In>) =>
    run(op.name, args);

  /** A job tool (sync, delete_by_source): a result still running is followed to its end. */
  const runJobTool = (name: string, args: Record<string, unknown>) =>
    ctx.withRuntime(async (rt) => {
      const r = (await callTool(rt, mempalaceHome(), name, args)) as Record<string, unknown>;
      if (r.status !== 'running' || typeof r.job_id !== 'string') return printResult(r, Boolean(ctx.globals().json));
      const final = await watchJob(rt, r.job_id, Boolean(ctx.globals().json));
      printResult(final.result ? { ...final.result, job_id: final.job_id } : final, Boolean(ctx.globals().json));
      if (final.state !== 'completed') process.exitCode = 1;
    });

  const kg = program.command('kg').description('the temporal knowledge graph');
  kg.command('add').description('add a fact: subject → predicate → object')
    .argument('<subject>').argument('<predicate>').argument('<object>')
    .option('--valid-from <date>', 'when it became true').option('--valid-to <date>', 'when it stopped being true (backfill)')
    .option('--source-closet <id>', 'closet id where the fact appears')
    .action((subject: string, predicate: string, object: string, o: { validFrom?: string; validTo?: string; sourceCloset?: string }) =>
      runOperation(kgAddOperation, { subject, predicate, object, valid_from: o.validFrom, valid_to: o.validTo, source_closet: o.sourceCloset })
    );
  kg.command('query').description('facts about an entity')
    .argument('<entity>')
    .option('--as-of <date>', 'only facts valid at this date or instant')
    .addOption(new Option('--direction <d>', 'which side the entity is on').choices(Object.keys(DIRECTIONS)).default('both'))
    .action((entity: string, o: { asOf?: string; direction: keyof typeof DIRECTIONS }) =>
      runOperation(kgQueryOperation, { entity, as_of: o.asOf, direction: DIRECTIONS[o.direction] })
    );
  kg.command('invalidate').description('end a fact')
    .argument('<subject>').argument('<predicate>').argument('<object>')
    .option('--ended <date>', 'when it stopped being true (default today)')
    .action((subject: string, predicate: string, object: string, o: { ended?: string }) =>
      runOperation(kgInvalidateOperation, { subject, predicate, object, ended: o.ended })
    );
  kg.command('supersede').description('replace a single-valued fact at one boundary')
    .argument('<subject>').argument('<predicate>').argument('<old-object>').argument('<new-object>')
    .option('--at <date>', 'the boundary (default now)')
    .action((subject: string, predicate: string, oldObject: string, newObject: string, o: { at?: string }) =>
      runOperation(kgSupersedeOperation, { subject, predicate, old_object: oldObject, new_object: newObject, at: o.at })
    );
  kg.command('timeline').description('facts in time order, of one entity or all').argument('[entity]')
    .action((entity: string | undefined) => runOperation(kgTimelineOperation, { entity }));
  kg.command('stats').description('entity and fact counts').action(() => runOperation(kgStatsOperation, {}));

  const tunnels = program.command('tunnels').description('explicit tunnels between rooms of different wings');
  tunnels.command('list').option('--wing <wing>', 'only tunnels touching this wing').action((o: { wing?: string }) =>
    runOperation(listTunnelsOperation, { wing: o.wing })
  );
  tunnels.command('create').argument('<source-wing>').argument('<source-room>').argument('<target-wing>').argument('<target-room>')
    .option('--label <text>', 'how the two connect').option('--source-drawer <id>', 'a specific source drawer').option('--target-drawer <id>',
      'a specific target drawer')
    .action((sw: string, sr: string, tw: string, tr: string, o: { label?: string; sourceDrawer?: string; targetDrawer?: string }) =>
      runOperation(createTunnelOperation, { source_wing: sw, source_room: sr, target_wing: tw, target_room: tr, label: o.label,
        source_drawer_id: o.sourceDrawer, target_drawer_id: o.targetDrawer })
    );
  tunnels.command('delete').argument('<tunnel-id>').action((id: string) => runOperation(deleteTunnelOperation, { tunnel_id: id }));
  tunnels.command('follow').argument('<wing>').argument('<room>').action((wing: string, room: string) => runOperation(followTunnelsOperation, { wing, room }));

  const hallways = program.command('hallways').description('hallways: entities shared by rooms of one wing');
  hallways.command('list').option('--wing <wing>', 'only this wing').action((o: { wing?: string }) => runOperation(listHallwaysOperation, { wing: o.wing }));
  hallways.command('delete').argument('<hallway-id>').action((id: string) => runOperation(deleteHallwayOperation, { hallway_id: id }));

  program.command('traverse').description('walk the room graph from a room').argument('<start-room>')
    .option('--max-hops <n>', 'hops to follow (1–10)', '2')
    .action((room: string, o: { maxHops: string }) => runOperation(traverseOperation, { start_room: room, max_hops: o.maxHops }));

  const diary = program.command('diary').description('agent diaries');
  diary.command('write').argument('<agent>').argument('<entry...>')
    .option('--topic <topic>').option('--wing <wing>', 'target wing (default wing_<agent>)')
    .action((agent: string, words: string[], o: { topic?: string; wing?: string }) =>
      runOperation(diaryWriteOperation, { agent_name: agent, entry: words.join(' '), topic: o.topic, wing: o.wing })
    );
  diary.command('read').argument('<agent>').option('--last <n>', 'entries (1–100)', '10').option('--wing <wing>')
    .action((agent: string, o: { last: string; wing?: string }) => runOperation(diaryReadOperation, { agent_name: agent, last_n: o.last, wing: o.wing }));

  const drawers = program.command('drawers').description('drawers one by one');
  drawers.command('get').argument('<drawer-id>').action((id: string) => run('get_drawer', { drawer_id: id }));
  drawers.command('list').option('--wing <wing>').option('--room <room>').option('--since <date>').option('--before <date>')
    .option('--limit <n>', 'page size (1–100)', '20').option('--offset <n>', 'page start', '0')
    .action((o: { wing?: string; room?: string; since?: string; before?: string; limit: string; offset: string }) =>
      run('list_drawers', { wing: o.wing, room: o.room, since: o.since, before: o.before, limit: o.limit, offset: o.offset })
    );
  drawers.command('update').argument('<drawer-id>')
    .option('--content <text>').option('--wing <wing>').option('--room <room>').option('--if-unchanged <sha256>', 'content_sha256 from drawers get')
    .action((id: string, o: { content?: string; wing?: string; room?: string; ifUnchanged?: string }) =>
      run('update_drawer', { drawer_id: id, content: o.content, wing: o.wing, room: o.room, if_unchanged: o.ifUnchanged })
    );
  drawers.command('delete').argument('<drawer-id>').action((id: string) => run('delete_drawer', { drawer_id: id }));

  program.command('sync').description('prune drawers whose source files are gone (dry run unless --apply)')
    .option('--project-dir <dir>').option('--wing <wing>').option('--apply', 'delete what is provably stale')
    .option('--force', 'apply even when the sync guard stops it (a root that is not the filesystem it was mined from, or most of a source deleted)')
    .action((o: { projectDir?: string; wing?: string; apply?: boolean; force?: boolean }) =>
      runJobTool('sync', { project_dir: o.projectDir, wing: o.wing, apply: o.apply ? true : undefined, force: o.force ? true : undefined })
    );

  program.command('delete-by-source').description('delete every drawer of one exact source_file (dry run unless --apply)')
    .argument('<source-file>').option('--apply', 'delete, irreversibly')
    .action((sourceFile: string, o: { apply?: boolean }) => runJobTool('delete_by_source', { source_file: sourceFile, dry_run: !o.apply }));
}
