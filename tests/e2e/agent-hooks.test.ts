/**
 * The agent-host hooks on realistic Claude Code and Codex transcripts (embedded profile, a
 * throwaway home): the stop hook files the new exchanges at 15 and 30 human messages and only
 * once, memories_filed_away reports each save once and then answers quiet, precompact files the
 * whole transcript skipping what was filed, session-start answers with valid SessionStart JSON
 * within the token budget. The sequences run the hook command's code in this process (one
 * embedder for all); then the `mempalace hook run` process itself is run as a host runs it:
 * JSON on stdin, the host's JSON on stdout, exit 0 even on a broken input, session-end saving in
 * a detached child.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliContext } from '../../cli/commands/context.js';
import { executeHook } from '../../cli/commands/hooks.js';
import { shellQuote } from '../../cli/shell-quote.js';
import type { Embedder } from '../../embed/embedder.js';
import type { Runtime } from '../../palace/runtime.js';
import { openRuntime } from '../../app/runtime.js';
import { loadConfig } from '../../app/config.js';
import { loadTokenCounter } from '../../embed/token-counter.js';
import { memoriesFiledAway } from '../../palace/system/system.js';
import { openStores } from '../../stores/open.js';
import type { FixtureHarness } from '../fixtures/agent-sessions.js';
import { exchangeText, hookInput, writeSession } from '../fixtures/agent-sessions.js';
import { CLI_ARGS, ROOT, runCli } from '../helpers/cli.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mempalace-hooks-'));
const home = path.join(tmp, 'home');
const palace = path.join(tmp, 'palace');
const mempalaceHome = path.join(home, '.mempalace');
fs.mkdirSync(home, { recursive: true });
const MODEL_DIR = loadConfig().modelDir;
const config = loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: palace, MEMPALACE_ENTITY_REGISTRY: path.join(tmp, 'none.json') });
let rt: Runtime;
let ctx: CliContext;

beforeAll(async () => {
  rt = await openRuntime(config);
  ctx = { globals: () => ({}), config: () => config, withRuntime: (fn) => fn(rt), intOption: (_name, value) => Number(value) };
});

afterAll(async () => {
  await rt?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** The `mempalace hook run` process, as a host runs it, over its own palace and home. */
function hookProcess(name: string, harness: FixtureHarness, input: string, processHome: string, processPalace: string) {
  return runCli(['--palace', processPalace, 'hook', 'run', '--hook', name, '--harness', harness], { input,
    env: { HOME: processHome, MEMPALACE_MODEL_DIR: MODEL_DIR, MEMPALACE_PROFILE: 'embedded', MEMPALACE_ENTITY_REGISTRY: path.join(tmp, 'none.json') } });
}

/** One hook through the command's own code, in this process. */
async function hook(name: 'session-start' | 'stop' | 'precompact', harness: FixtureHarness, input: string) {
  const r = await executeHook(ctx, name, harness, input, mempalaceHome);
  return { stdout: r.stdout === undefined ? '' : JSON.stringify(r.stdout), stderr: r.message, failed: r.failed };
}

async function listSession(stores: Pick<Runtime['stores'], 'drawers'>, wing: string,
  sessionId: string): Promise<{ exchanges: number[]; contents: string[]; diary: string[] }> {
  const page = await stores.drawers.list({ wing, meta: { session_id: sessionId } }, 0, 1000);
  const sorted = page.items.sort((a, b) => Number(a.meta.exchange_index) - Number(b.meta.exchange_index));
  const diary = await stores.drawers.list({ wing, room: 'diary' }, 0, 1000);
  return {
    exchanges: sorted.map((d) => Number(d.meta.exchange_index)),
    contents: sorted.map((d) => d.content),
    diary: diary.items.map((d) => d.content).filter((c) => c.includes(sessionId)),
  };
}

/** Exchange positions filed for a session, one entry per drawer, plus the session's diary lines. */
const filed = (wing: string, sessionId: string) => listSession(rt.stores, wing, sessionId);

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe.each(['claude-code', 'codex'] as const)('%s hooks', (harness) => {
  const project = path.join(tmp, `proj-${harness}`);
  const wing = `proj_${harness.replace('-', '_')}`;
  fs.mkdirSync(project, { recursive: true });
  const session = `sess-${harness}-0001`;
  const transcript = path.join(tmp, `${harness}-session.jsonl`);
  const stop = () => hook('stop', harness, hookInput(harness, 'Stop', session, transcript, project));

  it('files nothing before 15 human messages', async () => {
    await memoriesFiledAway(mempalaceHome);
    writeSession(transcript, harness, 14, session, project);
    const r = await stop();
    expect(r.failed).toBe(false);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('not_due');
    expect((await filed(wing, session)).exchanges).toEqual([]);
    expect((await memoriesFiledAway(mempalaceHome)).status).toBe('quiet');
  });

  it('at 15 files exactly the 15 exchanges verbatim with a diary entry; the same state files once', async () => {
    writeSession(transcript, harness, 15, session, project);
    const r = await stop();
    expect(r.failed).toBe(false);
    expect(JSON.parse(r.stdout)).toEqual({ systemMessage: expect.stringContaining('15 exchanges filed into the palace') });
    const after = await filed(wing, session);
    expect(after.exchanges).toEqual(range(0, 15));
    const { question, answer } = exchangeText(5);
    expect(after.contents[5]).toBe(`> ${question}\n${answer}`);
    expect(after.diary).toHaveLength(1);
    expect(after.diary[0]).toContain('exchanges 1–15 (15)');

    const again = await stop();
    expect(again.failed).toBe(false);
    expect(again.stdout).toBe('');
    expect((await filed(wing, session)).exchanges).toEqual(range(0, 15));
  });

  it('memories_filed_away reports the save once, then answers quiet', async () => {
    const first = await memoriesFiledAway(mempalaceHome);
    expect(first).toMatchObject({ status: 'ok', count: 15, message: '✦ 15 messages tucked into drawers' });
    expect(typeof first.timestamp).toBe('string');
    expect(await memoriesFiledAway(mempalaceHome)).toMatchObject({ status: 'quiet', count: 0 });
  });

  it('at 30 files exactly the 15 new exchanges, once', async () => {
    writeSession(transcript, harness, 29, session, project);
    expect((await stop()).stdout).toBe('');
    writeSession(transcript, harness, 30, session, project);
    expect(JSON.parse((await stop()).stdout).systemMessage).toContain('15 exchanges');
    const after = await filed(wing, session);
    expect(after.exchanges).toEqual(range(0, 30));
    expect(after.diary).toHaveLength(2);
    expect((await memoriesFiledAway(mempalaceHome)).count).toBe(15);
    expect((await stop()).stdout).toBe('');
    expect((await filed(wing, session)).exchanges).toEqual(range(0, 30));
  });

  it('precompact files the rest of the transcript, skipping what was filed', async () => {
    writeSession(transcript, harness, 34, session, project);
    const r = await hook('precompact', harness, hookInput(harness, 'PreCompact', session, transcript, project, { trigger: 'auto' }));
    expect(r.failed).toBe(false);
    expect(r.stderr).toContain('filed 4 drawers');
    expect((await filed(wing, session)).exchanges).toEqual(range(0, 34));
  });

  it('precompact on a session never saved files the whole transcript', async () => {
    const other = `sess-${harness}-0002`;
    const file = path.join(tmp, `${harness}-other.jsonl`);
    writeSession(file, harness, 7, other, project);
    const r = await hook('precompact', harness, hookInput(harness, 'PreCompact', other, file, project));
    expect(r.failed).toBe(false);
    expect((await filed(wing, other)).exchanges).toEqual(range(0, 7));
  });

  it('session-start answers with the SessionStart context, within the token budget', async () => {
    const r = await hook('session-start', harness, hookInput(harness, 'SessionStart', session, transcript, project, { source: 'startup' }));
    expect(r.failed).toBe(false);
    const out = JSON.parse(r.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    expect(Object.keys(out)).toEqual(['hookSpecificOutput']);
    expect(out.hookSpecificOutput.hookEventName).toBe('SessionStart');
    const context = out.hookSpecificOutput.additionalContext;
    expect(context).toContain('## Memory protocol');
    expect(context).toContain(`## Map of ${wing}`);
    expect(context).toContain('exchanges 1–15');
    const count = await loadTokenCounter(loadConfig());
    expect(count(context)).toBeLessThanOrEqual(900);
    expect(count(context)).toBeGreaterThan(100);
  });
});

describe.each(['claude-code', 'codex'] as const)('the %s hook process', (harness) => {
  const processHome = path.join(tmp, `home-${harness}`);
  const processPalace = path.join(tmp, `palace-${harness}`);
  const project = path.join(tmp, `app-${harness}`);
  const wing = `app_${harness.replace('-', '_')}`;
  const session = `proc-${harness}`;
  const transcript = path.join(tmp, `proc-${harness}.jsonl`);
  fs.mkdirSync(project, { recursive: true });
  fs.mkdirSync(path.join(processHome, '.mempalace'), { recursive: true });
  // One run must file all 15 exchanges here, however slow this machine starts a process and
  // loads the model; the save budget's own test is 'a large transcript and a small save budget'.
  fs.writeFileSync(path.join(processHome, '.mempalace', 'config.json'), JSON.stringify({ hooks: { save_budget_s: 300 } }));

  async function processFiled(): Promise<number[]> {
    const stores = await openStores(loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: processPalace }));
    try {
      return (await listSession(stores, wing, session)).exchanges;
    } finally {
      await stores.close();
    }
  }

  it("stop at 15 files the exchanges and prints the host's JSON; session-start prints the SessionStart context", async () => {
    writeSession(transcript, harness, 15, session, project);
    const r = hookProcess('stop', harness, hookInput(harness, 'Stop', session, transcript, project), processHome, processPalace);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ systemMessage: expect.stringContaining('15 exchanges filed') });
    expect(await processFiled()).toEqual(range(0, 15));
    const start = hookProcess('session-start', harness, hookInput(harness, 'SessionStart', session, transcript, project, { source: 'startup' }), processHome,
      processPalace);
    expect(start.code).toBe(0);
    expect(JSON.parse(start.stdout)).toMatchObject({
      hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: expect.stringContaining(`## Map of ${wing}`) },
    });
  });

  it('session-end returns at once and files the rest in a detached child', async () => {
    writeSession(transcript, harness, 18, session, project);
    const r = hookProcess('session-end', harness, hookInput(harness, 'SessionEnd', session, transcript, project, { reason: 'other' }), processHome,
      processPalace);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('background');
    const deadline = Date.now() + 240_000;
    let exchanges: number[] = [];
    while (Date.now() < deadline) {
      exchanges = await processFiled();
      if (exchanges.length >= 18) break;
      await new Promise((res) => setTimeout(res, 1000));
    }
    expect(exchanges).toEqual(range(0, 18));
  });

  it('a broken stdin exits 0, says so on stderr and records the failure', () => {
    const r = hookProcess('stop', harness, '{not json', processHome, processPalace);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('failed, the host continues');
    const log = fs.readFileSync(path.join(processHome, '.mempalace', 'hook_state', 'hook_errors.log'), 'utf8').trim().split('\n');
    expect(JSON.parse(log[log.length - 1]!)).toMatchObject({ hook: 'stop', harness, error: expect.stringContaining('not a JSON object') });
  });
});

describe('silent_save off', () => {
  it('the stop hook asks the agent to save (a block decision) once, and files nothing itself', async () => {
    fs.mkdirSync(mempalaceHome, { recursive: true });
    fs.writeFileSync(path.join(mempalaceHome, 'config.json'), JSON.stringify({ hooks: { silent_save: false } }));
    try {
      const project = path.join(tmp, 'proj-blocking');
      fs.mkdirSync(project, { recursive: true });
      const file = path.join(tmp, 'blocking.jsonl');
      writeSession(file, 'claude-code', 15, 'sess-block', project);
      const r = await hook('stop', 'claude-code', hookInput('claude-code', 'Stop', 'sess-block', file, project));
      expect(JSON.parse(r.stdout)).toMatchObject({ decision: 'block', reason: expect.stringContaining('mempalace_checkpoint') });
      const active = await hook('stop', 'claude-code', hookInput('claude-code', 'Stop', 'sess-block', file, project, { stop_hook_active: true }));
      expect(active.stdout).toBe('');
      expect((await filed('proj_blocking', 'sess-block')).exchanges).toEqual([]);
    } finally {
      fs.rmSync(path.join(mempalaceHome, 'config.json'));
    }
  });
});

describe('the installed hook command', () => {
  it("runs through the host's sh -c with a palace path holding $(…), backticks, quotes and spaces taken literally", () => {
    const pwned = path.join(tmp, 'pwned-xyz');
    const palaceDir = path.join(tmp, `odd $(touch ${pwned}) \`touch ${pwned}\` "q" it's`, 'palace');
    const settings = path.join(tmp, 'odd-host', 'settings.json');
    const command = [process.execPath, ...CLI_ARGS].map(shellQuote).join(' ');
    const env = { ...process.env, HOME: path.join(tmp, 'odd-home'), MEMPALACE_MODEL_DIR: MODEL_DIR, MEMPALACE_ENTITY_REGISTRY: path.join(tmp, 'none.json') };
    fs.mkdirSync(env.HOME, { recursive: true });
    const install = runCli(['--palace', palaceDir, '--json', 'hooks', 'install', '--settings', settings, '--command', command], { env, timeoutMs: 120_000 });
    expect(install.code).toBe(0);
    const installed = JSON.parse(fs.readFileSync(settings, 'utf8')) as { hooks: Record<string, { hooks: { command: string }[] }[]> };
    const line = installed.hooks.SessionStart!.flatMap((g) => g.hooks).map((h) => h.command).find((c) => c.includes('hook run'))!;
    const project = path.join(tmp, 'odd-project');
    fs.mkdirSync(project, { recursive: true });
    const r = spawnSync('sh', ['-c', line], { cwd: ROOT,
      input: hookInput('claude-code', 'SessionStart', 'odd-session', path.join(tmp, 'none.jsonl'), project, { source: 'startup' }), encoding: 'utf8', env,
      timeout: 240_000 });
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('wake-up context');
    expect(fs.existsSync(pwned)).toBe(false);
    expect(fs.statSync(palaceDir).isDirectory()).toBe(true);
  });
});

describe('a large transcript and a small save budget', () => {
  it('each stop run files a part within the budget and records it; the next runs continue; in the end every exchange is filed exactly once', async () => {
    const budgetS = 8;
    const budgetHome = path.join(tmp, 'budget-home', '.mempalace');
    fs.mkdirSync(budgetHome, { recursive: true });
    fs.writeFileSync(path.join(budgetHome, 'config.json'), JSON.stringify({ hooks: { save_budget_s: budgetS } }));
    const project = path.join(tmp, 'proj-budget');
    fs.mkdirSync(project, { recursive: true });
    const session = 'sess-budget';
    const file = path.join(tmp, 'budget.jsonl');
    const total = 400;
    writeSession(file, 'claude-code', total, session, project);
    // The real embedder, slowed by 25 ms a text, so 400 exchanges take longer than the budget on
    // any machine (a quiet one embedded all 400 within 8 s otherwise).
    const slowed: Embedder = {
      model: rt.embedder.model,
      dimension: rt.embedder.dimension,
      identity: rt.embedder.identity,
      close: async () => undefined,
      embed: async (texts, options) => {
        await new Promise((res) => setTimeout(res, 25 * texts.length));
        return rt.embedder.embed(texts, options);
      },
    };
    const slowRuntime: Runtime = { ...rt, drawerContext: { ...rt.drawerContext, embedder: slowed } };
    const slowCtx: CliContext = { ...ctx, withRuntime: (fn) => fn(slowRuntime) };
    const runs: { ms: number; message: string; filed: number }[] = [];
    for (let run = 0; run < 60; run++) {
      const started = Date.now();
      const r = await executeHook(slowCtx, 'stop', 'claude-code', hookInput('claude-code', 'Stop', session, file, project), budgetHome, started);
      const ms = Date.now() - started;
      expect(r.failed).toBe(false);
      if (r.message.includes('not_due')) break;
      runs.push({ ms, message: r.message, filed: (await filed('proj_budget', session)).exchanges.length });
    }
    console.log(`budgeted stop runs (${budgetS} s budget, ${total} exchanges): ${runs.map((r) => `${r.ms} ms → ${r.filed}`).join(', ')}`);
    expect(runs.length).toBeGreaterThan(1);
    expect(runs[0]!.message).toContain('the next save continues');
    expect(runs[0]!.filed).toBeGreaterThan(0);
    expect(runs[0]!.filed).toBeLessThan(total);
    for (const r of runs) expect(r.ms).toBeLessThan(budgetS * 1000 + 3000);
    for (let i = 1; i < runs.length; i++) expect(runs[i]!.filed).toBeGreaterThan(runs[i - 1]!.filed);
    const after = await filed('proj_budget', session);
    expect(after.exchanges).toEqual(range(0, total));
    const counted = after.diary.map((d) => Number(/\((\d+)\) filed verbatim/.exec(d)![1]));
    expect(counted.reduce((a, b) => a + b, 0)).toBe(total);
  });
});
