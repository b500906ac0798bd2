/**
 * The stop hook in the cluster profile: the hook enqueues the auto-save on the BullMQ trigger
 * queue under a deterministic job id, a real `mempalace worker --short-jobs-only` process files
 * it into OpenSearch, the same session state never files twice (the hook's state and the job id),
 * and the next 15 messages file the next 15 exchanges.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliContext } from '../../cli/commands/context.js';
import { executeHook } from '../../cli/commands/hooks.js';
import type { Runtime } from '../../palace/runtime.js';
import { openRuntime } from '../../app/runtime.js';
import { loadConfig } from '../../app/config.js';
import { memoriesFiledAway } from '../../palace/system/system.js';
import { TriggerQueue } from '../../jobs/engines/queues/queues.js';
import type { AutoSaveRequest } from '../../jobs/engines/queues/queues.js';
import { hookInput, writeSession } from '../fixtures/agent-sessions.js';
import { uniquePalaceName } from './temporal-harness.js';
import { dropClusterPalace } from '../helpers/cluster-palace.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mempalace-hooks-cluster-'));
const name = uniquePalaceName('hooks');
const home = path.join(tmp, 'home', '.mempalace');
const env = {
  ...process.env,
  MEMPALACE_PROFILE: 'cluster',
  MEMPALACE_PALACE: path.join(tmp, 'palace'),
  MEMPALACE_PALACE_NAME: name,
  MEMPALACE_TASK_QUEUE: `tq-${name}`,
  MEMPALACE_MODEL_DIR: loadConfig().modelDir,
  MEMPALACE_ENTITY_REGISTRY: path.join(tmp, 'none.json'),
};
const config = loadConfig(env);
const project = path.join(tmp, 'ledger');
const transcript = path.join(tmp, 'session.jsonl');
const session = 'cluster-session-1';
let rt: Runtime;
let ctx: CliContext;
let worker: ChildProcess;
let workerLog = '';
let queue: TriggerQueue;

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 240_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; worker said:\n${workerLog}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function filedExchanges(): Promise<number[]> {
  const page = await rt.stores.drawers.list({ wing: 'ledger', meta: { session_id: session } }, 0, 1000);
  return page.items.map((d) => Number(d.meta.exchange_index)).sort((a, b) => a - b);
}

/** The BullMQ job once the worker finished it (its drawers are visible a little before). */
async function completed(jobId: string) {
  return until(`job ${jobId} to complete`, async () => {
    const job = await queue.queue.getJob(jobId);
    return job && (await job.getState()) === 'completed' ? job : undefined;
  });
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

beforeAll(async () => {
  fs.mkdirSync(project, { recursive: true });
  fs.mkdirSync(home, { recursive: true });
  rt = await openRuntime(config);
  ctx = { globals: () => ({}), config: () => config, withRuntime: (fn) => fn(rt), intOption: (_n, v) => Number(v) };
  queue = new TriggerQueue({ redisUrl: config.redis.url, palaceName: name });
  worker = spawn(process.execPath, [path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), path.join(ROOT, 'cli', 'main.ts'), 'worker',
    '--short-jobs-only'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  worker.stdout!.on('data', (d: Buffer) => {
    workerLog += d.toString();
  });
  worker.stderr!.on('data', (d: Buffer) => {
    workerLog += d.toString();
  });
});

afterAll(async () => {
  if (worker && worker.exitCode === null) {
    const gone = new Promise((r) => worker.once('exit', r));
    worker.kill('SIGTERM');
    await gone;
  }
  await queue?.queue.obliterate({ force: true }).catch(() => undefined);
  await queue?.close();
  await rt?.close();
  await dropClusterPalace(config);
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** The autosave job id a hook's message names; the test fails when it names none. */
function queuedJobId(message: string): string {
  const jobId = /queued (autosave-[0-9a-f]+)/.exec(message)?.[1];
  expect(jobId).toBeDefined();
  return jobId!;
}

/** The exchange indexes filed so far, once at least `count` are. */
function exchangesFiled(count: number): Promise<number[]> {
  return until(`the worker to file ${count} exchanges`, async () => {
    const e = await filedExchanges();
    return e.length >= count ? e : undefined;
  });
}

describe('the stop hook through BullMQ to a worker process', () => {
  const stop = () => executeHook(ctx, 'stop', 'claude-code', hookInput('claude-code', 'Stop', session, transcript, project), home);

  it('at 15 messages the hook enqueues, the worker files exactly the 15 exchanges, once', async () => {
    writeSession(transcript, 'claude-code', 15, session, project);
    const r = await stop();
    expect(r.failed).toBe(false);
    expect(r.stdout).toEqual({ systemMessage: expect.stringContaining('15 exchanges queued for the palace') });
    const jobId = queuedJobId(r.message);
    expect(await exchangesFiled(15)).toEqual(range(0, 15));
    const job = await completed(jobId);
    expect(job.returnvalue).toMatchObject({ drawers_filed: 15, drawers_already_filed: 0 });
    expect(await memoriesFiledAway(home)).toMatchObject({ status: 'ok', count: 15 });

    expect((await stop()).message).toContain('not_due');
    // The same request again (a hook firing twice for one state) is the same job: nothing new.
    const again = await queue.requestAutoSave(job.data as AutoSaveRequest);
    expect(again.id).toBe(jobId);
    expect(await filedExchanges()).toEqual(range(0, 15));
  });

  it('at 30 messages the next 15 exchanges are filed by a second job', async () => {
    writeSession(transcript, 'claude-code', 30, session, project);
    const r = await stop();
    const jobId = queuedJobId(r.message);
    expect(await exchangesFiled(30)).toEqual(range(0, 30));
    // The diary entry is written after the exchanges, so it is checked once the job has completed.
    const job = await completed(jobId);
    expect(job.returnvalue).toMatchObject({ drawers_filed: 15 });
    const diary = await rt.stores.drawers.list({ wing: 'ledger', room: 'diary' }, 0, 100);
    expect(diary.items.filter((d) => d.content.includes(session))).toHaveLength(2);
  });
});
