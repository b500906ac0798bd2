/**
 * `mempalace sources add|list|remove|refresh`: the sources the palace follows. `add` registers
 * a git repository (a URL, or any location with --ref) or a directory; `refresh` runs the
 * incremental mine now and waits for it, like `mine`.
 */
import { Option } from 'commander';
import type { Command } from 'commander';
import { MINE_MODES } from '../../jobs/job.js';
import { sourcePolicy } from '../../palace/sources/sources.js';
import { addSource, listSources, removeSource, sourcesContext, startRefresh } from '../../palace/sources/registered-sources.js';
import type { RegisteredSource } from '../../stores/ports/registered-sources.js';
import { printJson, table } from '../output.js';
import type { Runtime } from '../../palace/runtime.js';

export interface SourceCommandDeps {
  withRuntime<T>(fn: (rt: Runtime) => Promise<T>): Promise<T>;
  json(): boolean;
}

const ctx = (rt: Runtime) => sourcesContext(rt, sourcePolicy(rt.config));

function lastRefresh(s: RegisteredSource): string {
  const r = s.last_refresh;
  if (!r) return 'never';
  const when = r.finished_at ?? r.requested_at;
  return `${r.state} ${when}${r.commit ? ` @${r.commit.slice(0, 10)}` : ''}${r.error ? ` — ${r.error}` : ''}`;
}

export function registerSourceCommands(program: Command, deps: SourceCommandDeps): void {
  const sources = program.command('sources').description(
    'registered sources: repositories and directories the palace follows (refreshed by git push webhooks or on request)',
  );

  sources
    .command('add')
    .description('register a git repository (URL, or any location with --ref) or a directory')
    .argument('<location>', 'git URL (https, ssh, git@host:path, file://) or directory')
    .option('--ref <ref>', 'branch or tag to follow (git; default main)')
    .option('--wing <wing>', 'target wing (default: from the source name)')
    .addOption(new Option('--mode <mode>', 'what the source holds').choices([...MINE_MODES]).default('projects'))
    .action(async (location: string, o: { ref?: string; wing?: string; mode: string }) => {
      await deps.withRuntime(async (rt) => {
        const source = await addSource(ctx(rt), { location, ref: o.ref, wing: o.wing, mode: o.mode }, 'cli');
        if (deps.json()) printJson(source);
        else console.log(`registered ${source.source_id}: ${source.kind} ${source.location}${source.ref ? ` @ ${source.ref}` : ''}`);
      });
    });

  sources
    .command('list')
    .description('registered sources and their last refresh')
    .action(async () => {
      await deps.withRuntime(async (rt) => {
        const list = await listSources(ctx(rt));
        if (deps.json()) return printJson({ sources: list });
        if (list.length === 0) return console.log('No registered sources.');
        console.log(
          table(['source', 'kind', 'location', 'ref', 'wing', 'mode', 'last refresh'],
            list.map((s) => [s.source_id, s.kind, s.location, s.ref ?? '', s.wing ?? '', s.mode, lastRefresh(s)])),
        );
      });
    });

  /** A command on one registered source: its output as JSON, or as `text` says. */
  const onSource = (name: string, description: string, run: (rt: Runtime, id: string) => Promise<{ out: unknown; text: string; ok?: boolean }>) =>
    sources.command(name).description(description).argument('<source-id>').action(async (id: string) => {
      await deps.withRuntime(async (rt) => {
        const { out, text, ok = true } = await run(rt, id);
        if (deps.json()) printJson(out);
        else console.log(text);
        if (!ok) process.exitCode = 1;
      });
    });

  onSource('remove', 'stop following a source (its drawers stay)', async (rt, id) => ({ out: await removeSource(ctx(rt), id), text: `removed ${id}` }));
  onSource('refresh', 'refresh a source now (an incremental mine) and wait for it', async (rt, id) => {
    const started = await startRefresh(ctx(rt), id);
    const final = await rt.jobs.wait(started.job_id, 24 * 3600 * 1000);
    const text = (final.result as { output?: string } | undefined)?.output ?? final.error ?? final.state;
    return { out: final, text, ok: final.state === 'completed' };
  });
}
