/**
 * The agent-host integration: `hook run` (what Claude Code and Codex call), `hooks install`,
 * `wake-up` and `rules`. A hook never fails its host: whatever happens it exits 0, says what went
 * wrong on stderr and appends it to `<home>/hook_state/hook_errors.log`.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { Option } from 'commander';
import { agentRules, RULES_FILES, RULES_HOSTS } from '../../core/agent-rules.js';
import type { RulesHost } from '../../core/agent-rules.js';
import type { Harness } from '../../core/chat/session.js';
import { HARNESSES } from '../../core/chat/session.js';
import { loadTokenCounter } from '../../embed/token-counter.js';
import type { HookInput, HookName, SavePlan, SessionState } from '../../palace/hooks/agent-hooks.js';
import { HOOK_NAMES, parseHookInput, planSessionSave, projectWing, saveCheckpoint, writeSessionState } from '../../palace/hooks/agent-hooks.js';
import { checkpoint } from '../../palace/drawers/checkpoint.js';
import type { SaveBudget } from '../../palace/hooks/session-save.js';
import { fileSessionSave } from '../../palace/hooks/session-save.js';
import { taxonomy } from '../../palace/system/status.js';
import { mempalaceHome, readHookBehaviour, recordFiledAway } from '../../palace/system/system.js';
import type { WakeUpResult } from '../../palace/hooks/wake-up.js';
import { wakeUp } from '../../palace/hooks/wake-up.js';
import { defaultSettingsFile, hookBin, installHooks } from '../host-settings.js';
import type { Scope } from '../host-settings.js';
import { printJson } from '../output.js';
import type { Runtime } from '../../palace/runtime.js';
import type { CliContext } from './context.js';

/** The MemPalace home, as every command names it. */
export { mempalaceHome };

/** Set in the detached child that runs a session-end save after its host has moved on. */
const BACKGROUND_INPUT_ENV = 'MEMPALACE_HOOK_BACKGROUND_INPUT';

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return '';
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function recordFailure(home: string, entry: Record<string, unknown>): Promise<void> {
  try {
    await fs.mkdir(path.join(home, 'hook_state'), { recursive: true });
    await fs.appendFile(path.join(home, 'hook_state', 'hook_errors.log'), `${JSON.stringify(entry)}\n`);
  } catch {
    // Nowhere left to record it; stderr already has it.
  }
}

function desktopToast(body: string): void {
  try {
    const child = spawn('notify-send', ['--app-name=MemPalace', 'MemPalace', body], { detached: true, stdio: 'ignore' });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // No notifier on this machine: the toast is a courtesy.
  }
}

async function identityText(home: string): Promise<string | undefined> {
  try {
    return await fs.readFile(path.join(home, 'identity.txt'), 'utf8');
  } catch {
    return undefined;
  }
}

export async function wakeUpFor(rt: Runtime, home: string, input: { wing?: string | undefined; budget?: number | undefined }): Promise<WakeUpResult> {
  const countTokens = await loadTokenCounter(rt.config);
  return wakeUp({ drawers: rt.stores.drawers, graph: rt.stores.graph, countTokens, identity: await identityText(home) }, input);
}

interface FiledSave {
  /** Drawers written by this run (0 when queued). */
  filed: number;
  /** Exchanges this run filed (or queued). */
  exchanges: number;
  /** Every planned exchange is filed; false when the budget ran out first (the next run continues). */
  complete: boolean;
  /** The session state to commit. */
  next: SessionState;
  queued?: string;
}

/**
 * Files a planned save: inline (embedded, and precompact everywhere) within `budget`, recording
 * its progress after each batch, or through the trigger queue (cluster). A run the budget cuts
 * short keeps the last save's human-message mark, so the next stop hook is due again and goes on
 * from where this one stopped.
 */
async function fileSave(rt: Runtime, home: string, harness: Harness, plan: SavePlan, inline: boolean, budget: SaveBudget | undefined): Promise<FiledSave> {
  const job = plan.job!;
  const save = job.session!;
  if (inline || rt.config.profile !== 'cluster') {
    const partial = (filedThrough: number): SessionState => ({ ...plan.next!, filed_exchanges: filedThrough, human_at_save: plan.state.human_at_save });
    const progress = budget && { ...budget, onProgress: (through: number) => writeSessionState(home, harness, job.sessionId, partial(through)) };
    const r = await fileSessionSave(rt.drawerContext, save, progress);
    const done = save.exchanges.filter((e) => e.index < r.filed_through);
    if (done.length > 0) await checkpoint(rt.drawerContext, saveCheckpoint(save, job.messages, done));
    return { filed: r.filed.length, exchanges: done.length, complete: r.complete, next: r.complete ? plan.next! : partial(r.filed_through) };
  }
  const { queueAutoSave } = await import('../../app/short-jobs.js');
  const { id } = await queueAutoSave(rt.config, job);
  return { filed: 0, exchanges: save.exchanges.length, complete: true, next: plan.next!, queued: id };
}

async function commitSave(home: string, harness: Harness, input: HookInput, filed: FiledSave, toast: boolean): Promise<void> {
  await writeSessionState(home, harness, input.session_id, filed.next);
  if (filed.exchanges === 0) return;
  await recordFiledAway(home, filed.exchanges, filed.next.saved_at!);
  if (toast) desktopToast(`${filed.exchanges} exchanges filed into the palace`);
}

function filedNote(filed: FiledSave): string {
  if (filed.queued) return `queued ${filed.queued}`;
  return filed.complete
    ? `filed ${filed.filed} drawers`
    : `filed ${filed.filed} drawers (${filed.exchanges} exchanges) within the time budget; the next save continues`;
}

interface HookOutcome {
  stdout?: Record<string, unknown>;
  note: string;
}

/** The view a hook's writes are made through: audited under the host's session id (palace/audit/session.ts). */
function hookRuntime(rt: Runtime, hook: HookName, input: HookInput): Runtime {
  return rt.forCall({ caller: undefined, transport: 'hook', action: `hook ${hook}`, requestId: randomUUID(), session: input.session_id });
}

async function runHook(ctx: CliContext, hook: HookName, harness: Harness, input: HookInput, home: string, startedAt: number): Promise<HookOutcome> {
  const behaviour = await readHookBehaviour(home);
  // The host waits for stop and precompact; the detached session-end child has no one waiting.
  const budget = process.env[BACKGROUND_INPUT_ENV] === undefined ? { deadline: startedAt + behaviour.save_budget_s * 1000 } : undefined;
  if (hook === 'session-start') {
    return ctx.withRuntime(async (rt) => {
      const wing = await projectWing(input.cwd);
      const known = Object.hasOwn(await taxonomy(rt.stores.drawers), wing);
      const w = await wakeUpFor(rt, home, { wing: known ? wing : undefined });
      return { stdout: { hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: w.text } }, note: `wake-up context: ${w.tokens} tokens` };
    });
  }
  if (!behaviour.auto_save) return { note: 'auto-save is off (hooks.auto_save)' };
  if (hook === 'session-end' && process.env[BACKGROUND_INPUT_ENV] === undefined) {
    // The host gives SessionEnd little time: the save runs in a detached child.
    const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
      detached: true,
      stdio: 'ignore',
      env: { ...process.env, [BACKGROUND_INPUT_ENV]: JSON.stringify(input) },
    });
    child.unref();
    return { note: `final save continues in the background (pid ${child.pid})` };
  }
  const now = new Date();
  if (hook === 'stop') {
    if (!behaviour.silent_save && input.stop_hook_active) return { note: 'a blocking save is already in progress' };
    const plan = await planSessionSave(home, harness, input, behaviour.save_interval, now);
    if (!plan.job) return { note: `no save (${plan.skip}; ${plan.newHumanMessages} new human messages)` };
    if (!behaviour.silent_save) {
      // The blocking path: the agent files the session itself through the MCP tools.
      await writeSessionState(home, harness, input.session_id, { ...plan.state, human_at_save: plan.humanMessages, saved_at: now.toISOString() });
      const { wing } = plan.job.session!;
      return {
        stdout: {
          decision: 'block',
          reason:
            `MemPalace checkpoint: file the last ${plan.newHumanMessages} exchanges of this session with mempalace_checkpoint (items in wing ${wing}, verbatim) and write a diary entry (wing ${wing}), then continue.`,
        },
        note: 'asked the agent to save (silent_save is off)',
      };
    }
    const filed = await ctx.withRuntime((rt) => fileSave(hookRuntime(rt, hook, input), home, harness, plan, false, budget));
    await commitSave(home, harness, input, filed, behaviour.desktop_toast);
    const more = filed.complete ? '' : `; ${plan.job.session!.exchanges.length - filed.exchanges} more on the next turns`;
    return {
      stdout: {
        systemMessage: `✦ ${filed.exchanges} exchanges ${filed.queued ? 'queued for' : 'filed into'} the palace (${plan.job.session!.wing}/${
          plan.job.session!.room
        })${more}`,
      },
      note: filedNote(filed),
    };
  }
  // precompact files synchronously in every profile: the host compacts right after it returns.
  const plan = await planSessionSave(home, harness, input, undefined, now);
  if (!plan.job) return { note: `nothing to file (${plan.skip})` };
  const filed = await ctx.withRuntime((rt) => fileSave(hookRuntime(rt, hook, input), home, harness, plan, hook === 'precompact', budget));
  await commitSave(home, harness, input, filed, behaviour.desktop_toast);
  return { note: filedNote(filed) };
}

/**
 * One hook run: what goes to stdout (the host's JSON, if any) and the line for stderr. Never
 * throws: a failure is reported and recorded, and the host goes on.
 */
export async function executeHook(ctx: CliContext, hook: HookName, harness: Harness, raw: string, home: string,
  startedAt = Date.now()): Promise<{ stdout?: Record<string, unknown>; message: string; failed: boolean }> {
  let input: HookInput | undefined;
  try {
    input = parseHookInput(raw);
    const outcome = await runHook(ctx, hook, harness, input, home, startedAt);
    return { ...(outcome.stdout ? { stdout: outcome.stdout } : {}), message: `mempalace hook ${hook}: ${outcome.note}`, failed: false };
  } catch (e) {
    const error = e instanceof Error ? e.message : String(e);
    await recordFailure(home, { at: new Date().toISOString(), hook, harness, session_id: input?.session_id ?? null, error });
    return { message: `mempalace hook ${hook}: failed, the host continues: ${error}`, failed: true };
  }
}

const harnessOption = () => new Option('--harness <host>', 'the agent host').choices([...HARNESSES]).default('claude-code');

export function registerHookCommands(program: Command, ctx: CliContext): void {
  const hook = program.command('hook').description('agent-host hooks (called by Claude Code or Codex)');
  hook
    .command('run')
    .description("run one hook: reads the host's hook JSON on stdin, writes what the host expects on stdout, always exits 0")
    .addOption(new Option('--hook <hook>', 'which hook').choices([...HOOK_NAMES]).makeOptionMandatory())
    .addOption(harnessOption())
    .action(async (o: { hook: HookName; harness: Harness }) => {
      const background = process.env[BACKGROUND_INPUT_ENV];
      // The save budget counts from the process's start: the host's clock started before ours.
      const r = await executeHook(ctx, o.hook, o.harness, background ?? (await readStdin()), mempalaceHome(), Math.floor(performance.timeOrigin));
      if (r.stdout) process.stdout.write(`${JSON.stringify(r.stdout)}\n`);
      process.stderr.write(`${r.message}\n`);
      process.exitCode = 0;
    });

  program
    .command('hooks')
    .description("install (or remove) the MemPalace hooks in an agent host's settings")
    .argument('[action]', 'install', 'install')
    .addOption(harnessOption())
    .option('--settings <file>', "the host's settings file (default: by host and scope)")
    .addOption(new Option('--scope <scope>', "user settings or this project's").choices(['user', 'project']).default('user'))
    .option('--command <cmd>', 'how the host runs mempalace', 'mempalace')
    .option('--uninstall', 'remove exactly the MemPalace entries')
    .action(async (action: string, o: { harness: Harness; settings?: string; scope: Scope; command: string; uninstall?: boolean }) => {
      if (action !== 'install') throw new Error(`unknown action '${action}' (expected: install)`);
      const g = ctx.globals();
      // The host runs the hooks without this shell's environment: the palace and profile go in the command.
      const bin = hookBin(o.command, g.palace ? path.resolve(g.palace) : undefined, g.profile);
      const file = o.settings ? path.resolve(o.settings) : defaultSettingsFile(o.harness, o.scope);
      const r = await installHooks({ harness: o.harness, file, bin, uninstall: Boolean(o.uninstall) });
      if (g.json) return printJson({ ...r, harness: o.harness, uninstalled: Boolean(o.uninstall) });
      const verb = o.uninstall ? 'Removed the MemPalace hooks from' : 'Installed the MemPalace hooks in';
      console.log(
        r.changed ? `${verb} ${r.settings_file} (${r.events.join(', ')})${r.backup ? `; backup at ${r.backup}` : ''}` : `${r.settings_file} already up to date`,
      );
    });

  program
    .command('wake-up')
    .description('the wake-up context: identity, protocol, current facts, latest diary entries, the map; within a token budget')
    .option('--wing <wing>', "only this wing's diary and map")
    .option('--budget <tokens>', "token budget (the embedding model's tokenizer)", '900')
    .action(async (o: { wing?: string; budget: string }) => {
      const budget = ctx.intOption('budget', o.budget);
      await ctx.withRuntime(async (rt) => {
        const w = await wakeUpFor(rt, mempalaceHome(), { wing: o.wing, budget });
        if (ctx.globals().json) printJson(w);
        else process.stdout.write(`${w.text}\n`);
      });
    });

  program
    .command('rules')
    .description('the agent rules block for CLAUDE.md, AGENTS.md or GEMINI.md')
    .addOption(new Option('--harness <host>', 'the agent host').choices([...RULES_HOSTS]).default('claude-code'))
    .action((o: { harness: RulesHost }) => {
      const text = agentRules(o.harness);
      if (ctx.globals().json) printJson({ harness: o.harness, file: RULES_FILES[o.harness], rules: text });
      else process.stdout.write(`${text}\n`);
    });
}
