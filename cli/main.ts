#!/usr/bin/env node
/**
 * The `mempalace` command: init, mine, search, status (and the servers). Every command takes
 * `--json`; human output is tables and a live progress bar.
 */
import { Command, Option } from 'commander';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../app/config.js';
import type { Config } from '../core/config.js';
import { invalidArgument } from '../core/errors.js';
import type { JobProgress, MineSpec } from '../jobs/job.js';
import { MINE_MODES } from '../jobs/job.js';
import { sourcePolicy } from '../palace/sources/sources.js';
import { parseJobRequest } from '../jobs/requests.js';
import { search } from '../palace/search/search.js';
import type { SearchOptions } from '../palace/search/search.js';
import { initProject, type ProjectInit } from '../palace/sources/project-init.js';
import { readEntityRegistry } from '../palace/sources/entity-registry.js';
import { splitMegaFiles } from '../palace/sources/mega-split-files.js';
import { registryCategoryNames } from '../core/entities.js';
import { palaceCounts } from '../palace/system/status.js';
import { mcpSetupText } from '../mcp/setup.js';
import { runStdioServer } from '../mcp/stdio.js';
import { printJson, reportError, table } from './output.js';
import type { PalaceModelCheck } from '../app/runtime.js';
import type { Runtime } from '../palace/runtime.js';
import { openRuntime, processLogger } from '../app/runtime.js';
import { startApiServer } from '../api/server.js';
import { registerBackupCommands } from './commands/backup.js';
import { registerSourceCommands } from './commands/sources.js';
import type { CliContext, GlobalOpts } from './commands/context.js';
import { registerHookCommands } from './commands/hooks.js';
import { registerPalaceCommands } from './commands/palace.js';
import { registerJobCommands, watchJob } from './commands/jobs.js';
import { registerLogstreamCommands } from './commands/logstream.js';
import { registerEvalCommand } from './commands/eval.js';
import { registerTokenCommands } from './commands/tokens.js';
import { registerAuditCommands } from './commands/audit.js';

/** The environment with the global options applied, which every configuration is read from. */
function envFrom(opts: GlobalOpts): NodeJS.ProcessEnv {
  const env = { ...process.env };
  if (opts.palace) env.MEMPALACE_PALACE = path.resolve(opts.palace);
  if (opts.profile) env.MEMPALACE_PROFILE = opts.profile;
  return env;
}

function configFrom(opts: GlobalOpts): Config {
  return loadConfig(envFrom(opts));
}

/** The command being run (`cli mine`, `cli drawers update`), the action its audit records name. */
let cliAction = 'cli';

/** A runtime for one command, seen as the local user's call so its writes are audited (issue 28). */
async function withRuntime<T>(opts: GlobalOpts, fn: (rt: Runtime) => Promise<T>, palaceModel?: PalaceModelCheck): Promise<T> {
  const rt = await openRuntime(configFrom(opts), palaceModel ? { palaceModel } : {});
  try {
    return await fn(rt.forCall({ caller: undefined, transport: 'cli', action: cliAction, requestId: randomUUID() }));
  } finally {
    await rt.close();
  }
}

function intOption(name: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n)) throw invalidArgument(name, 'integer', `--${name} must be an integer, got '${value}'`);
  return n;
}

/** A whitespace-collapsed preview of at most `n` characters. */
function oneLine(text: string, n: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > n ? `${flat.slice(0, n)}…` : flat;
}

function untilSignal(): Promise<void> {
  return new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
}

/** Follows a started job to its end with a progress bar (or lines, or JSON), setting the exit code. */
/** Follows a job to its end (a live progress bar, Ctrl-C cancels it), prints its outcome and sets the exit code. */
async function followJob(rt: Runtime, g: GlobalOpts, started: JobProgress): Promise<void> {
  const final = await watchJob(rt, started.job_id, Boolean(g.json));
  if (g.json) printJson(final);
  else {
    const out = (final.result as { output?: string } | undefined)?.output;
    console.log(out ?? final.error ?? final.state);
    if (final.recent_errors.length > 0) console.log(table(['file', 'error'], final.recent_errors.map((e) => [e.file, e.error])));
  }
  if (final.state === 'failed') process.exitCode = 1;
  if (final.state === 'cancelled') process.exitCode = 130;
}

const program = new Command();
program
  .name('mempalace')
  .description('A memory palace for AI agents: verbatim drawers, hybrid search, a knowledge graph, a logstream.')
  .option('--palace <dir>', 'palace directory (embedded profile); default $MEMPALACE_PALACE or ~/.mempalace/palace')
  .addOption(new Option('--profile <profile>', 'storage profile').choices(['embedded', 'cluster']))
  .option('--json', 'print JSON instead of tables')
  .showHelpAfterError()
  .hook('preAction', (_program, command) => {
    const names: string[] = [];
    for (let c: Command | null = command; c && c !== program; c = c.parent) names.unshift(c.name());
    cliAction = ['cli', ...names].join(' ');
  });

program
  .command('init')
  .description('create the palace; with a project directory, also propose its wing and rooms in mempalace.yaml, and the people and projects it names')
  .argument('[dir]', 'project directory to prepare for mining')
  .option('--yes', 'add the proposed people and projects to the entity registry (known_entities.json)')
  .action(async (dir: string | undefined, o: { yes?: boolean }) => {
    const g = program.opts<GlobalOpts>();
    const config = configFrom(g);
    const project = dir === undefined
      ? undefined
      : await initProject(dir, { languages: config.entityLanguages, registryFile: config.entityRegistryFile, confirm: Boolean(o.yes) });
    await withRuntime(g, async (rt) => {
      const counts = await palaceCounts(rt.stores.drawers);
      if (g.json) {
        printJson({ success: true, palace: rt.stores.palace, profile: rt.config.profile, total_drawers: counts.total_drawers,
          ...(project ? { project } : {}) });
        return;
      }
      console.log(`Palace ready at ${rt.stores.palace} (${rt.config.profile} profile, ${counts.total_drawers} drawers)`);
      if (project) {
        console.log(
          `${project.written ? 'Wrote' : 'Kept the existing'} ${project.config_file}: wing ${project.wing}, rooms ${
            project.rooms.map((r) => r.name).join(', ')
          }`,
        );
        printEntities(project);
        console.log(`Next: mempalace mine ${path.resolve(dir!)}`);
      }
    });
  });

function printEntities(project: ProjectInit): void {
  if (project.entities.length === 0) return console.log('No people or projects found to propose.');
  console.log(table(['name', 'kind', 'confidence', 'source', 'evidence'], project.entities.map((e) => [e.name, e.kind, e.confidence, e.source, e.evidence])));
  if (project.confirmed) {
    const c = project.confirmed;
    console.log(
      `Added to ${c.registry_file}: ${c.people.length} people, ${c.projects.length} projects; topics of wing ${project.wing}: ${c.topics.join(', ') || 'none'}`,
    );
  } else {
    console.log('Proposed only: run init again with --yes to add them to the entity registry, or edit the registry by hand.');
  }
}

program
  .command('split')
  .description('cut each .txt in a directory that holds several concatenated Claude Code sessions into one file per session, before mining it as convos')
  .argument('<dir>', 'directory of transcript exports')
  .option('--output-dir <dir>', 'write the parts here (default: beside each file)')
  .option('--min-sessions <n>', 'split only files with at least this many sessions', '2')
  .option('--dry-run', 'show what would be split, write nothing')
  .action(async (dir: string, o: { outputDir?: string; minSessions: string; dryRun?: boolean }) => {
    const g = program.opts<GlobalOpts>();
    const registry = readEntityRegistry(configFrom(g).entityRegistryFile);
    const report = await splitMegaFiles(dir, {
      outputDir: o.outputDir,
      dryRun: Boolean(o.dryRun),
      minSessions: intOption('min-sessions', o.minSessions),
      knownNames: registry ? registryCategoryNames(registry, 'people') : [],
    });
    if (g.json) return printJson(report);
    for (const f of report.files) {
      console.log(`${f.file}: ${f.sessions} sessions → ${f.parts.length} files${f.backup ? `, original kept as ${path.basename(f.backup)}` : ''}`);
      for (const part of f.parts) console.log(`  ${part}`);
    }
    for (const f of report.too_large) console.log(`${f}: over 500 MiB, not read`);
    console.log(`${report.dry_run ? 'Would split' : 'Split'} ${report.files.length} of ${report.files_scanned} .txt files in ${report.dir}.`);
  });

program
  .command('mine')
  .description('mine a directory (or a git repository) into the palace')
  .argument('<source>', 'directory to mine, a conversation file with --mode convos, or a git URL with --ref')
  .addOption(new Option('--mode <mode>', 'what the source holds').choices([...MINE_MODES]).default('projects'))
  .option('--wing <wing>', 'target wing (default: from the directory name or mempalace.yaml)')
  .option('--agent <name>', 'recorded on every drawer', 'mempalace')
  .option('--limit <n>', 'mine at most n files (0 = all)', '0')
  .option('--dry-run', 'walk and chunk, write nothing')
  .addOption(new Option('--extract <strategy>', 'conversation extraction').choices(['exchange', 'general']).default('exchange'))
  .option('--no-gitignore', 'do not apply .gitignore files')
  .option('--include-ignored <paths>', 'comma-separated paths to mine even if ignored', '')
  .option('--ref <ref>', 'mine a git repository at this ref (source is then the repository URL)')
  .action(
    async (source: string,
      o: { mode: MineSpec['mode']; wing?: string; agent: string; limit: string; dryRun?: boolean; extract: 'exchange' | 'general'; gitignore: boolean;
        includeIgnored: string; ref?: string }) => {
      const g = program.opts<GlobalOpts>();
      const config = configFrom(g);
      const request = {
        source,
        ...(o.ref === undefined ? {} : { ref: o.ref }),
        mode: o.mode,
        ...(o.wing === undefined ? {} : { wing: o.wing }),
        agent: o.agent,
        limit: intOption('limit', o.limit),
        dry_run: Boolean(o.dryRun),
        extract: o.extract,
        respect_gitignore: o.gitignore,
        include_ignored: o.includeIgnored.split(',').map((s) => s.trim()).filter(Boolean),
      };
      // Checked before the palace opens; a credential in a git URL is kept once it has.
      await parseJobRequest('mine', request, { policy: sourcePolicy(config), credentials: { put: async () => undefined } });
      await withRuntime(g, async (rt) => {
        const spec = await parseJobRequest('mine', request, { policy: sourcePolicy(config), credentials: rt.stores.credentials });
        await followJob(rt, g, await rt.jobs.start(spec));
      });
    },
  );

program
  .command('reembed')
  .description(
    're-embed every drawer of the palace with another model or encoder set, as a resumable job; the palace then records it (adding or removing an encoder is a re-embed to the new set)',
  )
  .option('--model <model>', 'the model to convert to (a MEMPALACE_EMBED_MODEL value)')
  .option('--encoders <set>', 'the encoder set to convert to (a MEMPALACE_ENCODERS value, e.g. all-MiniLM-L6-v2:0.5,bge-small-en-v1.5-q:0.5)')
  .action(async (o: { model?: string; encoders?: string }) => {
    const g = program.opts<GlobalOpts>();
    if ((o.model === undefined) === (o.encoders === undefined)) {
      throw invalidArgument('model', 'one_of_model_or_encoders', 'give one of --model and --encoders');
    }
    const spec = await parseJobRequest('reembed', { model: o.model ?? o.encoders }, { policy: sourcePolicy(configFrom(g)) });
    await withRuntime(g, async (rt) => {
      // Refuse an unknown model before any job starts.
      rt.embedderFor(spec.model);
      await followJob(rt, g, await rt.jobs.start(spec));
    }, 'reembed');
  });

/** The CLI searches the query as given, with no default distance cut-off (docs/palace-behaviour.md §8.2, §8.6). */
const CLI_SEARCH_OPTIONS: SearchOptions = { sanitize: false, defaultMaxDistance: 0 };

program
  .command('search')
  .description('hybrid (vector + BM25) search of the palace')
  .argument('<query...>', 'what to look for')
  .option('--wing <wing>').option('--room <room>').option('--source-file <path>')
  .option('--since <date>').option('--before <date>')
  .option('--results <n>', 'number of results', '5')
  .addOption(new Option('--strategy <s>', 'candidate strategy').choices(['union', 'vector']).default('union'))
  .option('--max-distance <d>', 'drop hits farther than this cosine distance (0 = off)', '0')
  .action(
    async (words: string[],
      o: { wing?: string; room?: string; sourceFile?: string; since?: string; before?: string; results: string; strategy: string; maxDistance: string }) => {
      const g = program.opts<GlobalOpts>();
      await withRuntime(g, async (rt) => {
        // `--results` is the CLI's name for the operation's `limit`; its bounds and the clamp are the operation's.
        const r = await search(rt.drawerContext, {
          query: words.join(' '),
          limit: intOption('results', o.results),
          wing: o.wing,
          room: o.room,
          source_file: o.sourceFile,
          since: o.since,
          before: o.before,
          candidate_strategy: o.strategy,
          max_distance: Number(o.maxDistance),
        }, CLI_SEARCH_OPTIONS);
        if (g.json) return printJson(r);
        if (r.results.length === 0) return console.log(`No results for "${r.query}" (${r.available_in_scope} drawers in scope).`);
        console.log(table(['#', 'similarity', 'bm25', 'wing/room', 'source', 'text'], r.results.map((h, i) => [
          i + 1,
          h.similarity ?? '-',
          h.bm25_score,
          `${h.wing}/${h.room}`,
          h.source_file,
          oneLine(h.text, 160),
        ]), [4, 12, 8, 26, 26, 70]));
      });
    },
  );

program
  .command('status')
  .description('drawer counts per wing and room')
  .action(async () => {
    const g = program.opts<GlobalOpts>();
    await withRuntime(g, async (rt) => {
      const counts = await palaceCounts(rt.stores.drawers);
      const jobs = await rt.jobs.list(5);
      if (g.json) return printJson({ palace: rt.stores.palace, profile: rt.config.profile, ...counts, recent_jobs: jobs });
      console.log(`Palace: ${rt.stores.palace} (${rt.config.profile}) — ${counts.total_drawers} drawers`);
      console.log(table(['wing', 'drawers'], Object.entries(counts.wings).sort()));
      console.log(table(['room', 'drawers'], Object.entries(counts.rooms).sort()));
      if (jobs.length > 0)
        console.log(
          table(['job', 'kind', 'state', 'files', 'drawers'],
            jobs.map((j) => [j.job_id.slice(0, 8), j.kind, j.state, `${j.files_seen}/${j.files_total}`, j.drawers_written])),
        );
    });
  });

program
  .command('mcp')
  .description('serve the 45 MCP tools over stdio (stdout carries only JSON-RPC; logs go to stderr)')
  .option('--read-only', 'hide and refuse every mutating tool')
  .option('--setup', 'print the commands that add this server to common MCP hosts, then exit')
  .action(async (o: { readOnly?: boolean; setup?: boolean }) => {
    const g = program.opts<GlobalOpts>();
    if (o.setup) {
      process.stdout.write(`${mcpSetupText({ ...(g.palace ? { palace: path.resolve(g.palace) } : {}) })}\n`);
      return;
    }
    const config = configFrom(g);
    const log = processLogger(config);
    const rt = await openRuntime(config, { log, role: 'mcp-stdio' });
    const handle = await runStdioServer(rt, {
      ...(o.readOnly ? { readOnly: true } : {}),
      ...(rt.stores.integrityCheck ? { integrityProbe: rt.stores.integrityCheck } : {}),
      reopen: () => openRuntime(config, { log, role: 'mcp-stdio' }),
    });
    await handle.closed;
    // The runtime served now: a reconnect closed the first one and opened this one.
    await handle.mcp.close();
  });

program
  .command('serve')
  .description('serve /mcp, the /v1 REST API, the logstream stream and the ops dashboard over HTTP')
  .option('--host <host>', 'address to bind', '127.0.0.1')
  .option('--port <port>', 'port to listen on', '8080')
  .option('--read-only', 'hide and refuse every mutating MCP tool, and refuse every REST write')
  .option('--allow-any-source', 'let callers mine any local path this process can read when MEMPALACE_ALLOWED_ROOTS is unset')
  .action(async (o: { host: string; port: string; readOnly?: boolean; allowAnySource?: boolean }) => {
    const loaded = configFrom(program.opts<GlobalOpts>());
    // A network server reads no local source by default: only inside the allowed roots.
    const config = { ...loaded, sources: { ...loaded.sources, requireAllowedRoots: !o.allowAnySource } };
    const port = intOption('port', o.port);
    const log = processLogger(config, true);
    const runtimeOptions = { log, role: 'serve' } as const;
    const rt = await openRuntime(config, runtimeOptions);
    const server = await startApiServer(rt, { host: o.host, port, readOnly: Boolean(o.readOnly), reopen: () => openRuntime(config, runtimeOptions) }).catch(
      async (e: unknown) => {
        await rt.close();
        throw e;
      },
    );
    await untilSignal();
    await server.close();
    await server.mcp.close();
  });

program
  .command('worker')
  .description('run a job worker (cluster profile): mine, sync and delete_by_source workflows from the Temporal task queue')
  .option('--max-activities <n>', 'activity attempts (scans, batches) running at once', '2')
  .option('--shutdown-grace <seconds>', 'on SIGTERM, how long in-flight batches may finish before they are handed back', '60')
  .option('--short-jobs-only', 'serve only the BullMQ queues (agent-hook auto-saves, source refreshes, job-end notifications), not the Temporal task queue')
  .action(async (o: { maxActivities: string; shutdownGrace: string; shortJobsOnly?: boolean }) => {
    const g = program.opts<GlobalOpts>();
    const config = configFrom(g);
    if (config.profile !== 'cluster')
      throw invalidArgument('profile', 'cluster_only', 'mempalace worker runs jobs of the cluster profile; set MEMPALACE_PROFILE=cluster or --profile cluster');
    const { runJobWorker } = await import('../app/worker.js');
    const log = processLogger(config, true);
    const rt = await openRuntime(config, { palaceModel: 'worker', log, role: 'worker' });
    try {
      if (!o.shortJobsOnly) {
        await runJobWorker(rt, { maxConcurrentActivities: intOption('max-activities', o.maxActivities),
          shutdownGraceMs: intOption('shutdown-grace', o.shutdownGrace) * 1000 });
        return;
      }
      const { startShortJobWorkers } = await import('../app/short-jobs.js');
      const shortJobs = startShortJobWorkers(rt);
      try {
        await untilSignal();
      } finally {
        await shortJobs.close();
      }
    } finally {
      await rt.close();
    }
  });

registerBackupCommands(program, () => configFrom(program.opts<GlobalOpts>()));
registerSourceCommands(program, { withRuntime: (fn) => withRuntime(program.opts<GlobalOpts>(), fn), json: () => Boolean(program.opts<GlobalOpts>().json) });
const cliContext: CliContext = {
  globals: () => program.opts<GlobalOpts>(),
  config: () => configFrom(program.opts<GlobalOpts>()),
  withRuntime: (fn) => withRuntime(program.opts<GlobalOpts>(), fn),
  intOption,
};
registerHookCommands(program, cliContext);
registerPalaceCommands(program, cliContext);
registerJobCommands(program, cliContext);
registerLogstreamCommands(program, cliContext);
registerAuditCommands(program, cliContext);
registerEvalCommand(program, cliContext, () => envFrom(program.opts<GlobalOpts>()));
registerTokenCommands(program, { config: () => configFrom(program.opts<GlobalOpts>()), log: (config) => processLogger(config),
  json: () => Boolean(program.opts<GlobalOpts>().json) });

program.parseAsync(process.argv).catch((e: unknown) => {
  process.exitCode = reportError(e, Boolean(program.opts<GlobalOpts>().json));
});
