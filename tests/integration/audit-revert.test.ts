/**
 * The audit trail and revert on both profiles, through the MCP face in process (issue 28):
 * one record per acknowledged write under three concurrent writers, `audit verify` catching an
 * edited and a deleted record, and a revert of one agent's writes that restores the before-state,
 * keeps a later writer's change as a conflict, and finishes as a job (the local runner, or a
 * Temporal worker in this process) after a batch was cut short.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import type { Config } from '../../core/config.js';
import { RedisConnections } from '../../stores/redis/connection.js';
import { clusterConfig } from '../helpers/cluster-palace.js';
import { verifyAudit } from '../../palace/audit/verify.js';
import { planRevert, revertBatch } from '../../palace/audit/revert.js';
import type { RevertDeps } from '../../palace/audit/revert.js';
import type { RevertSpec } from '../../jobs/job.js';
import type { Runtime } from '../../palace/runtime.js';
import { openProfilePalace } from '../helpers/profile-palace.js';
import type { ProfilePalace } from '../helpers/profile-palace.js';

const PROFILES: [string, (dir: string) => Config][] = [
  ['embedded', (dir) => loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: path.join(dir, 'palace') })],
  ['cluster', () => clusterConfig('audit')],
];

describe.each(PROFILES)('audit trail and revert (%s)', (profile, configOf) => {
  let palace: ProfilePalace;
  let dir: string;
  let config: Config;
  let rt: Runtime;
  const call = (identity: string, name: string, args: Record<string, unknown>) => palace.call(identity, name, args);

  const content = async (id: string) => (await rt.stores.drawers.get([id]))[0]?.content;
  const facts = async (entity: string) => (await rt.stores.graph.kgFacts({ entity_id: entity, direction: 'outgoing' })).map((f) => [f.id, f.valid_to]);

  beforeAll(async () => {
    palace = await openProfilePalace(configOf, 'mp-audit-');
    ({ dir, config, rt } = palace);
  });
  afterAll(() => palace?.close());

  it('has one record per acknowledged write under three concurrent writers, and verify passes', async () => {
    const acked = new Map<string, string[]>();
    await Promise.all(['alice', 'bob', 'carol'].map(async (agent) => {
      for (let i = 0; i < 8; i++) {
        const out = await call(agent, 'add_drawer', { wing: `w_${agent}`, room: 'notes', content: `${agent} note ${i}: concurrent writes keep one chain` });
        acked.set(agent, [...(acked.get(agent) ?? []), String(out.drawer_id)]);
      }
    }));
    const records = await rt.stores.audit.scan(0, 1000);
    for (const [agent, ids] of acked) {
      const mine = records.filter((r) => r.identity === agent && r.op === 'drawers.upsert');
      expect(mine).toHaveLength(ids.length);
      expect(mine.flatMap((r) => r.ids).sort()).toEqual(ids.map((id) => `drawer:${id}`).sort());
      expect(mine.every((r) => r.action === 'mempalace_add_drawer' && r.transport === 'mcp-http')).toBe(true);
    }
    expect(await verifyAudit(rt.stores.audit)).toMatchObject({ ok: true, records: 24 });
  });

  it("reverts one agent's writes after others wrote around them, reports the conflict, and resumes after being cut short", async () => {
    const bobDrawer = String((await call('bob', 'add_drawer', { wing: 'team', room: 'plans', content: 'bob: the plan is A' })).drawer_id);
    const carolDrawer = String((await call('carol', 'add_drawer', { wing: 'team', room: 'plans', content: 'carol: keep the cache' })).drawer_id);
    await call('bob', 'kg_add', { subject: 'Service', predicate: 'uses', object: 'Postgres' });
    const bobFacts = await facts('service');
    const since = new Date().toISOString();

    // mallory's session: adds, overwrites, deletes, adds and ends facts, opens a tunnel.
    const added = String((await call('mallory', 'add_drawer', { wing: 'team', room: 'plans', content: 'mallory: drop the database' })).drawer_id);
    const contested = String((await call('mallory', 'add_drawer', { wing: 'team', room: 'plans', content: 'mallory: second note' })).drawer_id);
    await call('mallory', 'update_drawer', { drawer_id: bobDrawer, content: 'mallory: the plan is Z' });
    await call('mallory', 'delete_drawer', { drawer_id: carolDrawer });
    await call('mallory', 'kg_invalidate', { subject: 'Service', predicate: 'uses', object: 'Postgres', ended: '2026-01-01' });
    await call('mallory', 'kg_add', { subject: 'Service', predicate: 'uses', object: 'Nothing' });
    const tunnel = await call('mallory', 'create_tunnel', { source_wing: 'team', source_room: 'plans', target_wing: 'w_bob', target_room: 'notes' });
    // Someone else writes around it afterwards: alice edits one of mallory's drawers.
    await call('alice', 'update_drawer', { drawer_id: contested, content: 'alice: rewrote this one' });

    const deps: RevertDeps = { ...rt.stores, embedder: rt.embedder };
    // Absent filters as the CLI and REST pass them.
    const selection = { agent: 'mallory', since, session: undefined, wing: undefined };
    const by = { identity: 'admin', transport: 'cli', action: 'cli revert' };
    const dry = await planRevert(deps, selection, 'rv1');
    expect(dry.conflicts.map((c) => [c.item, c.later_identity])).toEqual([[`drawer:${contested}`, 'alice']]);
    expect(dry.steps.map((s) => [s.item, s.action])).toContainEqual([`drawer:${added}`, 'remove_drawer']);
    expect(await content(bobDrawer)).toBe('mallory: the plan is Z');

    // Cut short: the store fails after the first reverted drawer write, as a killed process stops.
    let writes = 0;
    const failing: RevertDeps = { ...deps, drawers: new Proxy(rt.stores.drawers, { get(t, p) {
      const v = Reflect.get(t, p, t) as unknown;
      if ((p === 'upsert' || p === 'delete') && ++writes > 1) return () => Promise.reject(new Error('killed'));
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    } }) };
    await expect(revertBatch(failing, selection, { revertId: 'rv1', caller: { ...by, request_id: 'r1' }, count: 100 })).rejects.toThrow('killed');

    // The job of the same revert id goes on where the batch stopped.
    const spec: RevertSpec = { kind: 'revert', revertId: 'rv1', ...selection, by };
    const done = await rt.jobs.wait((await rt.jobs.start(spec)).job_id, 300_000);
    expect(done).toMatchObject({ state: 'completed', kind: 'revert', agent: 'mallory', since,
      result: { success: true, revert_id: 'rv1', conflicts_total: 1 } });
    expect(done.files_skipped).toBeGreaterThan(0);
    expect(done.files_seen).toBe(done.files_total);
    expect(done.result!.correction_event_id).toBeDefined();
    expect(await content(added)).toBeUndefined();
    expect(await content(contested)).toBe('alice: rewrote this one');
    expect(await content(bobDrawer)).toBe('bob: the plan is A');
    expect(await content(carolDrawer)).toBe('carol: keep the cache');
    const after = await facts('service');
    expect(after.filter(([id]) => bobFacts.some(([b]) => b === id))).toEqual(bobFacts);
    expect(after.filter(([id]) => !bobFacts.some(([b]) => b === id)).every(([, validTo]) => validTo !== null)).toBe(true);
    expect((await rt.stores.graph.tunnelList()).some((t) => t.id === (tunnel.tunnel_id ?? (tunnel.tunnel as { id?: string } | undefined)?.id))).toBe(false);
    // Each of mallory's records reverted exactly once, the one the cut-short batch left in flight included.
    const trail = await rt.stores.audit.scan(0, 10_000);
    const reverts = trail.filter((r) => r.op === 'revert.record').map((r) => r.reverts);
    const notItemwise = new Set((done.result!.not_reverted as { seq: number }[]).map((n) => n.seq));
    const mallorys = trail.filter((r) => r.identity === 'mallory' && !notItemwise.has(r.seq)).map((r) => r.seq);
    expect(mallorys.length).toBeGreaterThanOrEqual(7);
    expect([...reverts].sort((a, b) => a! - b!)).toEqual(mallorys);
    expect((await verifyAudit(rt.stores.audit)).ok).toBe(true);
  });

  it('verify detects a deleted record (cluster)', async () => {
    if (profile !== 'cluster') return;
    const redis = new RedisConnections({ url: config.redis.url, palaceName: config.palaceName });
    try {
      await redis.command().xdel(redis.key('audit'), '5-0');
    } finally {
      await redis.close();
    }
    expect((await verifyAudit(rt.stores.audit)).problems).toEqual([expect.objectContaining({ seq: 6, kind: 'missing' })]);
  });

  it('verify detects an edited and a deleted record (embedded)', async () => {
    if (profile !== 'embedded') return;
    const file = path.join(dir, 'palace', 'audit.sqlite3');
    const db = new Database(file);
    try {
      const row = db.prepare('SELECT seq, record FROM audit_records WHERE seq = 3').get() as { seq: number; record: string };
      db.prepare('UPDATE audit_records SET record = ? WHERE seq = 3').run(row.record.replace('"identity":"', '"identity":"x'));
      let result = await verifyAudit(rt.stores.audit);
      expect(result.problems).toEqual([expect.objectContaining({ seq: 3, kind: 'edited' })]);
      db.prepare('UPDATE audit_records SET record = ? WHERE seq = 3').run(row.record);
      db.prepare('DELETE FROM audit_records WHERE seq = 5').run();
      result = await verifyAudit(rt.stores.audit);
      expect(result.problems).toEqual([expect.objectContaining({ seq: 6, kind: 'missing' })]);
    } finally {
      db.close();
    }
  });
});
