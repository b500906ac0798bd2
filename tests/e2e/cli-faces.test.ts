/**
 * The CLI faces of the palace tools, one `mempalace` process per command as a user runs them,
 * in both profiles where they touch stores: kg, tunnels, hallways, traverse, diary, drawers, sync,
 * delete-by-source, jobs, logstream (tail follows live), task and artifact (files in and out,
 * sha256 verified), plus wake-up, rules and hooks install. Results are the tools' results
 * (`--json`); a tool-level failure exits 1, a rejected argument exits 2.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openRuntime } from '../../app/runtime.js';
import { loadConfig } from '../../app/config.js';
import { addDrawer } from '../../palace/drawers/drawers.js';
import { uniquePalaceName } from '../integration/temporal-harness.js';
import { dropClusterPalace } from '../helpers/cluster-palace.js';

// One process per command: on a loaded machine a test of nine commands needs more than the
// project's default five minutes. A budget, not a timing assertion.
vi.setConfig({ testTimeout: 1_200_000 });

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mempalace-cli-faces-'));
const MODEL_DIR = loadConfig().modelDir;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  // The tools' results are read field by field as the assertions need them.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

function profileEnv(profile: 'embedded' | 'cluster', name: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    HOME: path.join(tmp, `home-${profile}`),
    MEMPALACE_MODEL_DIR: MODEL_DIR,
    MEMPALACE_PROFILE: profile,
    MEMPALACE_PALACE: path.join(tmp, `palace-${profile}`),
    MEMPALACE_PALACE_NAME: name,
    MEMPALACE_TASK_QUEUE: `tq-${name}`,
    MEMPALACE_ENTITY_REGISTRY: path.join(tmp, 'none.json'),
    MEMPALACE_AGENT: 'tester',
  };
}

function start(env: NodeJS.ProcessEnv, args: string[]): { done: Promise<Run>; kill(): void } {
  const child = spawn(process.execPath, [path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), path.join(ROOT, 'cli', 'main.ts'), ...args], { cwd: ROOT,
    env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const done = new Promise<Run>((resolve) =>
    child.on('close', (code) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    })
  );
  return { done, kill: () => child.kill('SIGINT') };
}

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe.each(['embedded', 'cluster'] as const)('%s profile', (profile) => {
  const name = uniquePalaceName('cli');
  const env = profileEnv(profile, name);
  const config = loadConfig(env);
  const cli = (...args: string[]) => start(env, ['--json', ...args]).done;

  beforeAll(async () => {
    fs.mkdirSync(env.HOME!, { recursive: true });
    const rt = await openRuntime(config);
    try {
      for (const [wing, room, content] of [
        ['harbour', 'berths', 'Berth 4 is reserved for the ferry on weekdays; cargo ships use berths 5 to 9.'],
        ['harbour', 'tides', 'Spring tides this month peak at 5.2 m on the 14th; the outer gate closes above 5 m.'],
        ['shipping', 'berths', 'The shipping line asked for berth 6 every Tuesday from June onwards.'],
      ] as const) await addDrawer(rt.drawerContext, { wing, room, content, source_file: `/data/${room}.md`, added_by: 'seed' });
    } finally {
      await rt.close();
    }
  });

  afterAll(async () => {
    if (profile !== 'cluster') return;
    await dropClusterPalace(config);
  });

  it('kg add, query, supersede, invalidate, timeline, stats', async () => {
    const added = await cli('kg', 'add', 'Mira', 'works_on', 'ledger', '--valid-from', '2026-01-05');
    expect(added.code).toBe(0);
    expect(added.json).toMatchObject({ success: true, triple_id: expect.any(String) });
    const query = await cli('kg', 'query', 'Mira', '--direction', 'out');
    expect(query.json.facts).toMatchObject([{ predicate: 'works_on', object: 'ledger', current: true }]);
    const superseded = await cli('kg', 'supersede', 'Mira', 'works_on', 'ledger', 'harbour-ops', '--at', '2026-03-01');
    expect(superseded.json).toMatchObject({ success: true });
    const past = await cli('kg', 'query', 'Mira', '--as-of', '2026-02-01');
    expect(past.json.facts.map((f: { object: string }) => f.object)).toEqual(['ledger']);
    expect((await cli('kg', 'invalidate', 'Mira', 'works_on', 'harbour-ops', '--ended', '2026-06-30')).json).toMatchObject({ success: true });
    const timeline = await cli('kg', 'timeline', 'Mira');
    expect(timeline.json.count).toBe(2);
    expect((await cli('kg', 'stats')).json).toMatchObject({ triples: 2, current_facts: 0, expired_facts: 2 });
    // A refused argument exits 2 and names the field and the rule, as the CLI's own commands do.
    const bad = await cli('kg', 'query', 'Mira', '--as-of', 'yesterday-ish');
    expect(bad.code).toBe(2);
    expect(bad.json).toMatchObject({ code: 'invalid_argument', field: 'as_of', rule: 'iso_date_or_utc_instant', error: expect.any(String) });
  });

  it('tunnels create, list, follow, delete; hallways list, delete; traverse', async () => {
    const created = await cli('tunnels', 'create', 'harbour', 'berths', 'shipping', 'berths', '--label', 'same berth bookings');
    expect(created.code).toBe(0);
    const id = created.json.id as string;
    expect((await cli('tunnels', 'list', '--wing', 'shipping')).json).toMatchObject([{ id, label: 'same berth bookings' }]);
    expect((await cli('tunnels', 'follow', 'harbour', 'berths')).json).toMatchObject([{ connected_wing: 'shipping', connected_room: 'berths', tunnel_id: id }]);
    const traverse = await cli('traverse', 'berths', '--max-hops', '1');
    expect(traverse.code).toBe(0);
    expect(traverse.json[0]).toMatchObject({ room: 'berths', hop: 0 });
    expect((await cli('tunnels', 'delete', id)).json).toEqual({ deleted: id });
    expect((await cli('tunnels', 'list')).json).toEqual([]);
    expect((await cli('hallways', 'list')).json).toEqual([]);
    expect((await cli('hallways', 'delete', 'hallway_none')).json).toEqual({ deleted: false });
    const missing = await cli('tunnels', 'create', 'harbour', 'nowhere', 'shipping', 'berths');
    expect(missing.code).toBe(1);
    expect(missing.json.error).toContain("'nowhere'");
  });

  it('diary write, read; drawers list, get, update, delete', async () => {
    expect((await cli('diary', 'write', 'tester', 'Checked', 'the', 'berth', 'plan', 'with', 'Mira.', '--wing', 'harbour')).json).toMatchObject({ success: true,
      agent: 'tester' });
    const diary = await cli('diary', 'read', 'tester', '--last', '5');
    expect(diary.json).toMatchObject({ agent: 'tester', entries: [{ content: 'Checked the berth plan with Mira.' }] });
    const list = await cli('drawers', 'list', '--wing', 'harbour', '--room', 'tides');
    expect(list.json).toMatchObject({ total: 1, count: 1 });
    const id = list.json.drawers[0].drawer_id as string;
    const got = await cli('drawers', 'get', id);
    expect(got.json).toMatchObject({ drawer_id: id, wing: 'harbour', room: 'tides', content: expect.stringContaining('5.2 m') });
    const updated = await cli('drawers', 'update', id, '--content', 'Spring tides this month peak at 5.4 m on the 15th.', '--if-unchanged',
      got.json.content_sha256);
    expect(updated.json).toMatchObject({ success: true });
    expect((await cli('drawers', 'get', id)).json.content).toBe('Spring tides this month peak at 5.4 m on the 15th.');
    expect((await cli('drawers', 'delete', id)).json).toMatchObject({ success: true });
    const gone = await cli('drawers', 'get', id);
    expect(gone.code).toBe(1);
    const badLimit = await cli('drawers', 'list', '--limit', 'many');
    expect(badLimit.code).toBe(2);
    expect(badLimit.json).toMatchObject({ code: 'invalid_argument' });
  });

  it('logstream append, list, wait, tail (following live); task create', async () => {
    const project = name.replace(/-/g, '_');
    const stream = `project/${project}`;
    const tail = start(env, ['--json', 'logstream', 'tail', '--stream', stream, '--max-events', '2']);
    try {
      await following(tail);
    } finally {
      tail.kill();
    }
  });

  async function following(tail: ReturnType<typeof start>) {
    const project = name.replace(/-/g, '_');
    const stream = `project/${project}`;
    const first = await cli('logstream', 'append', '--stream', stream, '--type', 'status', '--body', 'berth plan drafted', '--to', 'reviewer', '--room',
      'status');
    expect(first.json).toMatchObject({ success: true, event: { type: 'status', from_agent: 'tester', to_agent: 'reviewer', body: 'berth plan drafted' } });
    const task = await cli('task', 'create', '--project', project, '--to', 'worker', '--goal', 'Check berth 6 bookings', '--branch', 'main', '--base-commit',
      'abc1234', '--done', 'A list of conflicts');
    expect(task.json).toMatchObject({ success: true, task: { type: 'task.request', to_agent: 'worker' }, handoff: expect.any(String) });
    const tailed = await tail.done;
    expect(tailed.code).toBe(0);
    const lines = tailed.stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: string; type: string });
    expect(lines.map((e) => e.type)).toEqual(['status', 'task.request']);
    const list = await cli('logstream', 'list', '--stream', stream);
    expect(list.json.count).toBe(2);
    const since = await cli('logstream', 'list', '--stream', stream, '--since', first.json.event.id);
    expect(since.json.events.map((e: { type: string }) => e.type)).toEqual(['task.request']);
    const waited = await cli('logstream', 'wait', '--stream', stream, '--since', task.json.task.id, '--timeout-ms', '300');
    expect(waited.json).toMatchObject({ timed_out: true, count: 0 });
  }

  it('artifact put and get move a file byte-exactly, sha256 verified', async () => {
    const file = path.join(tmp, `patch-${profile}.diff`);
    const text = 'diff --git a/berths.md b/berths.md\n--- a/berths.md\n+++ b/berths.md\n@@ -1 +1 @@\n-berth 4\n+berth 6 — Tuesdays ✓\n';
    fs.writeFileSync(file, text);
    const sha = createHash('sha256').update(fs.readFileSync(file)).digest('hex');
    const put = await cli('artifact', 'put', file, '--kind', 'patch');
    expect(put.code).toBe(0);
    expect(put.json).toMatchObject({ verified: true, artifact: { sha256: sha } });
    const out = path.join(tmp, `out-${profile}.diff`);
    const got = await cli('artifact', 'get', put.json.artifact.id, '--out', out);
    expect(got.json).toMatchObject({ verified: true, written: out, artifact: { sha256: sha } });
    expect(fs.readFileSync(out, 'utf8')).toBe(text);
    const binary = path.join(tmp, 'blob.bin');
    fs.writeFileSync(binary, Buffer.from([0xff, 0xfe, 0x00, 0x81]));
    expect((await cli('artifact', 'put', binary)).code).toBe(2);
  });

  it('delete-by-source (dry run, then applied), sync, jobs list, show and watch', async () => {
    // Cluster jobs run as Temporal workflows: a real `mempalace worker` process serves them.
    const worker = profile === 'cluster' ? start(env, ['worker']) : undefined;
    try {
      await jobCommands();
    } finally {
      worker?.kill();
      await worker?.done;
    }
  });

  async function jobCommands() {
    const dry = await cli('delete-by-source', '/data/berths.md');
    expect(dry.json).toMatchObject({ success: true, dry_run: true, match_count: 2 });
    const applied = await cli('delete-by-source', '/data/berths.md', '--apply');
    expect(applied.json).toMatchObject({ success: true, dry_run: false, deleted: 2 });
    const sync = await cli('sync', '--wing', 'harbour');
    expect(sync.code).toBe(0);
    expect(sync.json).toMatchObject({ success: true, dry_run: true });
    const jobs = await cli('jobs', 'list');
    expect(jobs.json.jobs.map((j: { kind: string }) => j.kind)).toEqual(expect.arrayContaining(['delete_by_source', 'sync']));
    const shown = await cli('jobs', 'show', jobs.json.jobs[0].job_id);
    expect(shown.json).toMatchObject({ job_id: jobs.json.jobs[0].job_id, state: 'completed' });
    const watched = await cli('jobs', 'watch', jobs.json.jobs[0].job_id);
    expect(watched.json).toMatchObject({ state: 'completed' });
  }

  it('wake-up within its budget, rules, hooks install', async () => {
    const wake = await cli('wake-up', '--budget', '300');
    expect(wake.code).toBe(0);
    expect(wake.json.tokens).toBeLessThanOrEqual(300);
    expect(wake.json.text).toContain('## Memory protocol');
    expect(wake.json.text).toContain('harbour');
    const rules = await cli('rules', '--harness', 'codex');
    expect(rules.json).toMatchObject({ file: 'AGENTS.md', rules: expect.stringContaining('mempalace_search') });
    const settings = path.join(tmp, `settings-${profile}.json`);
    const installed = await cli('hooks', 'install', '--harness', 'claude-code', '--settings', settings);
    expect(installed.json).toMatchObject({ changed: true, events: ['SessionStart', 'Stop', 'PreCompact', 'SessionEnd'] });
    expect(JSON.parse(fs.readFileSync(settings, 'utf8')).hooks.Stop[0].hooks[0].command).toContain('hook run --hook stop --harness claude-code');
  });
});
