/**
 * `mempalace eval SET [--palace DIR] [--strategy a,b] [--json]`: retrieval quality a user can
 * measure on their own data (palace/eval/). A drawer set (JSON lines) is searched in the palace; a
 * conversational set is first filed into a fresh temporary palace on the configured profile, or
 * into `--palace` when it is given. Prints recall@1/5/10 and MRR@10 per strategy side by side, per
 * category, and each strategy's difference from the first with its 95 % interval; with `--json`,
 * one object on the last line.
 */
import fs from 'node:fs/promises';
import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import { invalidArgument } from '../../core/errors.js';
import { fileConversations } from '../../palace/eval/file-conversations.js';
import { parseLabelledSet, type LabelledSet } from '../../palace/eval/labelled-set.js';
import type { EvalReport, StrategyScores } from '../../palace/eval/run-eval.js';
import { evaluate } from '../../palace/eval/run-eval.js';
import type { Runtime } from '../../palace/runtime.js';
import { CANDIDATE_STRATEGIES, type CandidateStrategy } from '../../palace/search/search.js';
import { withTemporaryPalace } from '../../app/temporary-palace.js';
import { table } from '../output.js';
import type { CliContext } from './context.js';

/** The default strategy first, so differences read "other minus default". */
const DEFAULT_STRATEGIES: CandidateStrategy[] = ['union', 'vector'];

function parseStrategies(value: string): CandidateStrategy[] {
  const names = [...new Set(value.split(',').map((s) => s.trim()).filter(Boolean))];
  if (names.length === 0) throw invalidArgument('strategy', 'non_empty_list', '--strategy needs at least one strategy');
  for (const n of names) {
    if (!(CANDIDATE_STRATEGIES as readonly string[]).includes(n))
      throw invalidArgument('strategy', 'one_of', `--strategy: unknown strategy '${n}'; expected ${CANDIDATE_STRATEGIES.join(', ')}`);
  }
  return names as CandidateStrategy[];
}

async function readSet(file: string): Promise<LabelledSet> {
  let source: string;
  try {
    source = await fs.readFile(file, 'utf8');
  } catch (e) {
    throw invalidArgument('set', 'readable_file', `cannot read the labelled set ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  return parseLabelledSet(source);
}

/** A bar on a terminal; nothing when stderr is not one or with --json. */
function progress(json: boolean): { update(label: string, done: number, total: number): void; stop(): void } {
  if (json || !process.stderr.isTTY) return { update: () => undefined, stop: () => undefined };
  const bar = new cliProgress.SingleBar({ format: '{label} [{bar}] {value}/{total}', hideCursor: true, stream: process.stderr },
    cliProgress.Presets.shades_classic);
  let started = false;
  return {
    update(label, done, total) {
      if (!started) bar.start(total, 0, { label });
      started = true;
      bar.setTotal(total);
      bar.update(done, { label });
    },
    stop: () => bar.stop(),
  };
}

const fixed = (x: number) => x.toFixed(3);

function scoreRow(name: string, s: StrategyScores, conversational: boolean): (string | number)[] {
  const row: (string | number)[] = [name, s.n, fixed(s['recall@1']), fixed(s['recall@5']), fixed(s['recall@10']), fixed(s['mrr@10'])];
  if (conversational)
    row.push(s.session ? fixed(s.session['recall@5']) : '–', s.session ? fixed(s.session['recall@10']) : '–', s.turn ? fixed(s.turn['recall@10']) : '–');
  return row;
}

function printReport(report: EvalReport): void {
  const conversational = report.kind === 'conversations';
  const head = ['strategy', 'n', 'recall@1', 'recall@5', 'recall@10', 'MRR@10',
    ...(conversational ? ['session recall@5', 'session recall@10', 'turn recall@10'] : [])];
  console.log(table(head, Object.entries(report.strategies).map(([name, s]) => scoreRow(name, s, conversational))));
  const categories = Object.entries(report.by_category);
  if (categories.length > 1) {
    console.log(
      table(['category', ...head], categories.flatMap(([category, byStrategy]) =>
        Object.entries(byStrategy).map(([name, s]) => [category, ...scoreRow(name, s, conversational)])
      )),
    );
  }
  const reference = Object.keys(report.strategies)[0];
  for (const [name, d] of Object.entries(report.differences)) {
    const line = (label: string, x: { mean: number; low: number; high: number }) =>
      `${label} ${x.mean >= 0 ? '+' : ''}${fixed(x.mean)} [${fixed(x.low)}, ${fixed(x.high)}]`;
    console.log(`${name} − ${reference}: ${line('MRR@10', d['mrr@10'])}, ${line('recall@10', d['recall@10'])} (95 % paired bootstrap)`);
  }
  if (report.skipped > 0) console.log(`${report.skipped} questions without evidence skipped`);
}

async function runEval(rt: Runtime, set: LabelledSet, strategies: CandidateStrategy[], json: boolean): Promise<EvalReport> {
  const bar = progress(json);
  try {
    if (set.kind === 'conversations') await fileConversations(rt.drawerContext, set.conversations, (done, total) => bar.update('filing', done, total));
    return await evaluate(rt.drawerContext, set, strategies, (done, total) => bar.update('searching', done, total));
  } finally {
    bar.stop();
  }
}

export function registerEvalCommand(program: Command, ctx: CliContext, env: () => NodeJS.ProcessEnv): void {
  program
    .command('eval')
    .description('measure retrieval quality on a labelled set (JSON lines of queries, or a conversational set)')
    .argument('<set>', 'the labelled set file')
    .option('--strategy <list>', `comma-separated strategies to compare, the first is the reference (${CANDIDATE_STRATEGIES.join(', ')})`,
      DEFAULT_STRATEGIES.join(','))
    .action(async (file: string, o: { strategy: string }) => {
      const json = Boolean(ctx.globals().json);
      const strategies = parseStrategies(o.strategy);
      const set = await readSet(file);
      const run = (rt: Runtime) => runEval(rt, set, strategies, json);
      const report = set.kind === 'conversations' && ctx.globals().palace === undefined
        ? await withTemporaryPalace(env(), 'eval', run)
        : await ctx.withRuntime(run);
      if (json) {
        process.stdout.write(`${JSON.stringify(report)}\n`);
        return;
      }
      printReport(report);
    });
}
