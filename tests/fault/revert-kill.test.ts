/**
 * A revert job killed with SIGKILL midway finishes exactly (issue 28), on both profiles: the
 * `mempalace revert` process itself (embedded: the local runner runs in it) resumed by running
 * the same command again, and a `mempalace worker` (cluster: Temporal) replaced by a new one.
 * One agent's session wrote around other agents' drawers, and others wrote after it; the
 * finished revert leaves every drawer as it was before the session except those others wrote
 * later (reported as conflicts, kept), and the trail reverts each record of the session once.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import { openRuntime } from '../../app/runtime.js';
import type { Config } from '../../core/config.js';
import type { Drawer } from '../../core/drawer.js';
import { TemporalJobEngine } from '../../jobs/engines/temporal/job-engine.js';
import type { JobProgress } from '../../jobs/job.js';
import { parseRevertRequest } from '../../jobs/requests.js';
import { REVERT_BATCH_RECORDS } from '../../jobs/revert/orchestration.js';
import { addDrawerOperation, deleteDrawerOperation, updateDrawerOperation } from '../../palace/drawers/drawers.js';
import type { Runtime } from '../../palace/runtime.js';
import { ROOT, runCli } from '../helpers/cli.js';
import { clusterConfig, dropClusterPalace } from '../helpers/cluster-palace.js';
import { operationCall } from '../helpers/operation-call.js';
import { exited } from '../helpers/processes.js';
import { startReembedWorker } from '../helpers/reembed.js';
import { makeTempDir, removeDir } from '../helpers/tmp.js';

/** Short, so the killed runner's lease lapses within seconds. */
const LEASE_MS = 3000;
const SESSION = 'mallory-run-1';

const addDrawer = operationCall(addDrawerOperation);
const updateDrawer = operationCall(updateDrawerOperation);
const deleteDrawer = operationCall(deleteDrawerOperation);

/** A drawer as the revert must leave it: content and metadata (not its vector, which is computed again). */
const state = (d: Drawer | undefined) => (d ? { content: d.content, meta: d.meta } : undefined);

interface Scenario {
  ids: string[];
  /** What the revert must leave: as before the session, except what others wrote after it. */
  expected: Map<string, ReturnType<typeof state>>;
  /** The items others wrote after the session: the conflicts. */
  conflicts: string[];
  /** The session's records, the ones the revert undoes. */
  sessionRecords: number[];
}

/** Writes as `identity` in `session` through the audited view a face gets, returning the drawer id. */
function writer(rt: Runtime, identity: string, session: string) {
  const view = (action: string) =>
    rt.forCall({ caller: { identity, scopes: ['read', 'write'] }, transport: 'mcp-http', action, requestId: randomUUID(), session }).drawerContext;
  return {
    add: async (room: string, content: string) => (await addDrawer(view('mempalace_add_drawer'), { wing: 'team', room, content })).drawer_id,
    update: (id: string, content: string) => updateDrawer(view('mempalace_update_drawer'), { drawer_id: id, content }),
    remove: (id: string) => deleteDrawer(view('mempalace_delete_drawer'), { drawer_id: id }),
  };
}

async function snapshot(rt: Runtime, ids: string[]): Promise<Map<string, ReturnType<typeof state>>> {
  const rows = new Map((await rt.stores.drawers.get(ids)).map((d) => [d.id, d]));
  return new Map(ids.map((id) => [id, state(rows.get(id))]));
}

/**
 * bob files twelve drawers; mallory's session adds forty, rewrites and deletes some of bob's and
 * of her own (76 records, several batches); then mallory in another session and alice write to
 * three of the items the session touched, and mallory's other session adds two drawers.
 */
async function writeAroundASession(rt: Runtime): Promise<Scenario> {
  const bob = writer(rt, 'bob', 'bob-1');
  const mallory = writer(rt, 'mallory', SESSION);
  const malloryLater = writer(rt, 'mallory', 'mallory-run-2');
  const alice = writer(rt, 'alice', 'alice-1');
  const b: string[] = [];
  for (let i = 0; i < 12; i++) b.push(await bob.add('plans', `bob plan ${i}: keep the service small and the deploys boring`));
  const bobs = await snapshot(rt, b);
  const beforeSeq = (await rt.stores.audit.head()).seq;
  const m: string[] = [];
  for (let i = 0; i < 40; i++) m.push(await mallory.add(`room${i % 3}`, `mallory note ${i}: rewrite everything in a weekend`));
  for (let i = 0; i < 12; i++) await mallory.update(b[i]!, `mallory was here: plan ${i} is cancelled`);
  for (let i = 8; i < 12; i++) await mallory.remove(b[i]!);
  for (let i = 0; i < 10; i++) await mallory.update(m[i]!, `mallory note ${i}, revised: rewrite it twice`);
  for (let i = 30; i < 40; i++) await mallory.remove(m[i]!);
  const sessionEnd = (await rt.stores.audit.head()).seq;
  await alice.update(m[5]!, 'alice: this note is worth keeping, rewritten');
  await alice.update(b[2]!, 'alice: plan 2 goes on, with a smaller scope');
  await malloryLater.update(b[5]!, 'mallory, next day: plan 5 is back');
  const x = [await malloryLater.add('room0', 'mallory, next day: a fresh start'), await malloryLater.add('room1', 'mallory, next day: another')];
  const ids = [...b, ...m, ...x];
  const trail = await rt.stores.audit.scan(beforeSeq, 10_000);
  const sessionRecords = trail.filter((r) => r.seq <= sessionEnd && r.identity === 'mallory' && r.op.startsWith('drawers.')).map((r) => r.seq);
  expect(sessionRecords).toHaveLength(76);
  const later = new Set([m[5]!, b[2]!, b[5]!, ...x]);
  const now = await snapshot(rt, ids);
  const expected = new Map(ids.map((id) => [id, later.has(id) ? now.get(id) : bobs.get(id)]));
  return { ids, expected, conflicts: [m[5]!, b[2]!, b[5]!].map((id) => `drawer:${id}`).sort(), sessionRecords };
}

/** Resolves with the progress once a batch is done and another is left; throws if the job ends first. */
async function untilMidway(progress: () => Promise<Pick<JobProgress, 'files_seen' | 'files_total' | 'state'> | undefined>) {
  for (;;) {
    const p = await progress();
    if (p && p.files_seen >= REVERT_BATCH_RECORDS && p.files_seen < p.files_total) return p;
    if (p && p.state !== 'running') throw new Error(`the revert ended before it could be killed midway: ${JSON.stringify(p)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The final state, the conflicts, and each record of the session reverted exactly once in the trail. */
async function expectExactRevert(rt: Runtime, s: Scenario, done: JobProgress): Promise<void> {
  expect(done).toMatchObject({ state: 'completed', kind: 'revert', agent: 'mallory', session: SESSION, files_total: 76, files_seen: 76 });
  expect(Object.fromEntries(await snapshot(rt, s.ids))).toEqual(Object.fromEntries(s.expected));
  const result = done.result as { conflicts: { item: string }[]; reverted: number; revert_id: string };
  expect([...new Set(result.conflicts.map((c) => c.item))].sort()).toEqual(s.conflicts);
  expect(result.reverted).toBe(76);
  const reverts = (await rt.stores.audit.scan(0, 100_000)).filter((r) => r.op === 'revert.record' && r.detail?.revert_id === result.revert_id);
  expect(reverts.map((r) => r.reverts!).sort((a, b) => a - b)).toEqual(s.sessionRecords);
  expect(reverts.every((r) => r.request_id === done.job_id && r.identity === 'admin')).toBe(true);
}

describe('a revert killed with SIGKILL midway (embedded: the CLI process)', () => {
  let dir: string;
  let config: Config;
  const env = () => ({ MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: config.palaceDir, MEMPALACE_JOB_LEASE_MS: String(LEASE_MS), MEMPALACE_AGENT: 'admin',
    MEMPALACE_EMBED_THREADS: '1' });
  const command = ['revert', '--agent', 'mallory', '--session', SESSION];

  beforeAll(() => {
    dir = makeTempDir('mp-revert-kill-');
    config = loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: path.join(dir, 'palace') });
  });
  afterAll(() => removeDir(dir));

  it('runs the same command again: every record reverted once, the state exactly as before the session, conflicts kept', async () => {
    let rt = await openRuntime(config);
    const scenario = await writeAroundASession(rt).finally(() => rt.close());

    // `node --import tsx`, not the tsx launcher: the signal must reach the process that runs the job.
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'cli', 'main.ts'), ...command], { cwd: ROOT, env: { ...process.env, ...env() },
      stdio: ['ignore', 'ignore', 'pipe'] });
    let latest: Pick<JobProgress, 'files_seen' | 'files_total' | 'state'> | undefined;
    child.stderr!.on('data', (chunk: Buffer) => {
      for (const m of chunk.toString().matchAll(/revert (\w+): (\d+)\/(\d+) files/g)) {
        latest = { state: m[1] as JobProgress['state'], files_seen: Number(m[2]), files_total: Number(m[3]) };
      }
    });
    const killedAt = await untilMidway(async () => latest).finally(() => child.kill('SIGKILL'));
    await exited(child);
    expect(child.signalCode).toBe('SIGKILL');

    rt = await openRuntime(config);
    let stale: JobProgress | undefined;
    try {
      stale = (await rt.jobs.list(5)).find((j) => j.kind === 'revert');
      expect(stale).toMatchObject({ state: 'running', files_total: 76 });
      expect(stale!.files_seen).toBeGreaterThanOrEqual(killedAt.files_seen);
      expect(stale!.files_seen).toBeLessThan(76);
    } finally {
      await rt.close();
    }
    await new Promise((r) => setTimeout(r, LEASE_MS + 500)); // the dead runner's lease lapses

    const again = runCli(['--json', ...command], { env: env() });
    expect(again.code, again.stderr).toBe(0);
    const done = JSON.parse(again.stdout) as JobProgress;
    expect(done.job_id).toBe(stale!.job_id);
    rt = await openRuntime(config);
    try {
      await expectExactRevert(rt, scenario, done);
      const starts = (await rt.stores.audit.scan(0, 100_000)).filter((r) => r.op === 'jobs.start' && r.ids.includes(`job:${done.job_id}`));
      expect(starts.map((r) => [r.identity, r.action, r.detail?.kind, r.detail?.agent])).toEqual([
        ['admin', 'cli revert', 'revert', 'mallory'],
        ['admin', 'cli revert', 'revert', 'mallory'],
      ]);
    } finally {
      await rt.close();
    }
  });
});

describe('a revert whose Temporal worker is killed with SIGKILL midway (cluster)', () => {
  let config: Config;
  let rt: Runtime;
  const workers: ChildProcess[] = [];

  beforeAll(async () => {
    config = clusterConfig('revert-kill');
    rt = await openRuntime(config);
  });
  afterAll(async () => {
    for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
    await Promise.all(workers.map(exited));
    await rt?.close();
    await dropClusterPalace(config);
  });

  it('a new worker finishes it: every record reverted once, the state exactly as before the session, conflicts kept', async () => {
    const scenario = await writeAroundASession(rt);
    // A client with short heartbeat timeouts, so the killed worker's batch moves on in seconds.
    const engine = await TemporalJobEngine.connect({ palace: rt.stores.palace, jobs: rt.stores.jobs, temporal: config.temporal, pollMs: 200,
      timeouts: { leaseMs: 8000, heartbeatTimeoutMs: 10_000, activityTimeoutMs: 10 * 60_000 } });
    try {
      const first = startReembedWorker(config, config.palaceName);
      workers.push(first);
      const { spec } = parseRevertRequest({ agent: 'mallory', session: SESSION }, { identity: 'admin', transport: 'rest', action: 'POST /v1/revert' });
      const started = await engine.start(spec);
      const killedAt = await untilMidway(() => engine.progress(started.job_id)).finally(() => first.kill('SIGKILL'));
      await exited(first);
      expect(killedAt.files_seen).toBeLessThan(76);
      expect((await engine.progress(started.job_id)).state).toBe('running');

      workers.push(startReembedWorker(config, config.palaceName));
      const done = await engine.wait(started.job_id, 300_000);
      await expectExactRevert(rt, scenario, done);
    } finally {
      await engine.close();
    }
  });
});
