/**
 * CLI faces of the coordination tools: `logstream append|list|wait|tail`, `task create` and
 * `artifact put|get`. Artifacts move files in and out byte-exactly: the sha256 of the file read
 * must equal the one the palace stored, and the content fetched must hash to the stored sha256
 * before anything is written.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { invalidArgument, PalaceError } from '../../core/errors.js';
import { sha256Hex } from '../../core/text.js';
import { printJson } from '../output.js';
import { callTool, printResult } from '../tool-call.js';
import type { CliContext } from './context.js';
import { mempalaceHome } from './hooks.js';

interface EventRow {
  id: string;
  seq: number;
  type: string;
  from_agent: string;
  to_agent: string | null;
  room: string;
  created_at: string;
  body: string;
}

const defaultAgent = () => process.env.MEMPALACE_AGENT ?? 'cli';

function parseMetadata(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Reported below with the field's name.
  }
  throw invalidArgument('metadata', 'json_object', '--metadata must be a JSON object');
}

function eventLine(e: EventRow): string {
  const to = e.to_agent ? ` → ${e.to_agent}` : '';
  return `${e.created_at} ${e.id} [${e.room}] ${e.type} ${e.from_agent}${to}: ${e.body.replace(/\s+/g, ' ').trim()}`;
}

export function registerLogstreamCommands(program: Command, ctx: CliContext): void {
  const json = () => Boolean(ctx.globals().json);
  const run = (name: string, args: Record<string, unknown>) =>
    ctx.withRuntime(async (rt) => printResult(await callTool(rt, mempalaceHome(), name, args), json()));
  const filters = (o: { stream: string; room?: string; type?: string; to?: string; from?: string; correlationId?: string }) => ({
    stream: o.stream,
    room: o.room,
    type: o.type,
    to_agent: o.to,
    from_agent: o.from,
    correlation_id: o.correlationId,
  });

  const ls = program.command('logstream').description('the append-only coordination log');
  ls.command('append').description('append one event')
    .requiredOption('--stream <stream>').requiredOption('--type <type>').option('--body <text>', 'verbatim content', '')
    .option('--from <agent>', 'the writer (default $MEMPALACE_AGENT or cli)').option('--to <agent>', 'target agent or *')
    .option('--room <room>', 'sub-channel', 'general').option('--topic <topic>').option('--correlation-id <id>').option('--status <status>')
    .option('--metadata <json>', 'extra fields as a JSON object').option('--artifact <id...>', 'artifact ids the event cites')
    .action((
      o: { stream: string; type: string; body: string; from?: string; to?: string; room: string; topic?: string; correlationId?: string; status?: string;
        metadata?: string; artifact?: string[] },
    ) =>
      run('event_append', {
        stream: o.stream,
        type: o.type,
        body: o.body,
        from_agent: o.from ?? defaultAgent(),
        to_agent: o.to,
        room: o.room,
        topic: o.topic,
        correlation_id: o.correlationId,
        status: o.status,
        metadata: parseMetadata(o.metadata),
        artifact_ids: o.artifact,
      })
    );

  const filtered = (c: Command) =>
    c.requiredOption('--stream <stream>').option('--since <event-id>', 'only events after this id')
      .option('--room <room>').option('--type <type>').option('--to <agent>').option('--from <agent>').option('--correlation-id <id>');
  filtered(ls.command('list').description('events, oldest first')).option('--limit <n>', 'at most n events (≤ 500)', '50')
    .action((o: { stream: string; since?: string; limit: string; room?: string; type?: string; to?: string; from?: string; correlationId?: string }) =>
      run('event_list', { ...filters(o), since_event_id: o.since, limit: o.limit })
    );
  filtered(ls.command('wait').description('wait until a matching event exists')).option('--timeout-ms <ms>', 'how long to wait (≤ 300000)', '60000')
    .action((o: { stream: string; since?: string; timeoutMs: string; room?: string; type?: string; to?: string; from?: string; correlationId?: string }) =>
      run('event_wait', { ...filters(o), since_event_id: o.since, timeout_ms: o.timeoutMs })
    );
  filtered(ls.command('tail').description('print events as they arrive (one JSON object a line with --json) until Ctrl-C'))
    .option('--max-events <n>', 'stop after n events (0 = follow forever)', '0')
    .action((o: { stream: string; since?: string; maxEvents: string; room?: string; type?: string; to?: string; from?: string; correlationId?: string }) =>
      ctx.withRuntime(async (rt) => {
        const max = ctx.intOption('max-events', o.maxEvents);
        const stop = new AbortController();
        const onSignal = () => stop.abort();
        process.once('SIGINT', onSignal);
        process.once('SIGTERM', onSignal);
        let since = o.since;
        let printed = 0;
        try {
          while (!stop.signal.aborted && (max === 0 || printed < max)) {
            const page = (await callTool(rt, mempalaceHome(), 'event_wait', { ...filters(o), since_event_id: since, timeout_ms: 30_000 }, stop.signal)) as {
              events: EventRow[];
            };
            for (const e of page.events) {
              if (max !== 0 && printed >= max) break;
              process.stdout.write(`${json() ? JSON.stringify(e) : eventLine(e)}\n`);
              since = e.id;
              printed++;
            }
          }
        } catch (e) {
          if (!stop.signal.aborted) throw e;
        } finally {
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
        }
      })
    );

  program.command('task').description('delegate work to another agent').command('create')
    .requiredOption('--project <name>').requiredOption('--to <agent>', 'the worker agent').requiredOption('--goal <text>')
    .requiredOption('--branch <branch>').requiredOption('--base-commit <sha>').requiredOption('--done <text>', 'definition of done')
    .option('--from <agent>', 'you (default $MEMPALACE_AGENT or cli)')
    .action((o: { project: string; to: string; goal: string; branch: string; baseCommit: string; done: string; from?: string }) =>
      run('task_create', { project: o.project, from_agent: o.from ?? defaultAgent(), to_agent: o.to, goal: o.goal, branch: o.branch, base_commit: o.baseCommit,
        done: o.done })
    );

  const artifact = program.command('artifact').description('exact content for handoffs (UTF-8 text, ≤ 4 MiB)');
  artifact.command('put').argument('<file>').option('--kind <kind>', 'file, json, log, note or patch', 'file')
    .option('--by <agent>', 'the writer (default $MEMPALACE_AGENT or cli)').option('--metadata <json>', 'extra fields as a JSON object')
    .action((file: string, o: { kind: string; by?: string; metadata?: string }) =>
      ctx.withRuntime(async (rt) => {
        const bytes = await fs.readFile(path.resolve(file));
        let content: string;
        try {
          content = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
        } catch {
          throw invalidArgument('file', 'utf8', `${file} is not UTF-8 text; artifacts hold text only`);
        }
        const sha256 = sha256Hex(bytes);
        const metadata = { filename: path.basename(file), ...parseMetadata(o.metadata) };
        const r = (await callTool(rt, mempalaceHome(), 'artifact_put', { kind: o.kind, content, created_by: o.by ?? defaultAgent(), metadata })) as {
          artifact: { id: string; sha256: string };
        };
        if (r.artifact.sha256 !== sha256)
          throw new PalaceError('internal', `stored sha256 ${r.artifact.sha256} differs from the file's ${sha256}`, {
            field: 'file',
            rule: 'sha256_match',
          });
        printResult({ ...r, verified: true }, json());
      })
    );
  artifact.command('get').argument('<artifact-id>').option('--out <file>', 'write the content here (default stdout)')
    .action((id: string, o: { out?: string }) =>
      ctx.withRuntime(async (rt) => {
        const r = (await callTool(rt, mempalaceHome(), 'artifact_get', { artifact_id: id })) as {
          artifact: { content: string; sha256: string; size_bytes: number };
        };
        const bytes = Buffer.from(r.artifact.content, 'utf8');
        const sha256 = sha256Hex(bytes);
        if (sha256 !== r.artifact.sha256)
          throw new PalaceError('internal', `artifact ${id} content hashes to ${sha256}, not its stored ${r.artifact.sha256}; nothing written`, {
            field: 'artifact_id',
            rule: 'sha256_match',
          });
        if (o.out === undefined) {
          process.stdout.write(bytes);
          return;
        }
        const out = path.resolve(o.out);
        const tmp = `${out}.${process.pid}.tmp`;
        await fs.writeFile(tmp, bytes);
        await fs.rename(tmp, out);
        const { content: _content, ...meta } = r.artifact;
        if (json()) printJson({ artifact: meta, written: out, verified: true });
        else console.log(`${out}: ${bytes.length} bytes, sha256 ${sha256} verified`);
      })
    );
}
