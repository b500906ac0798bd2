/**
 * The logstream mesh between real `mempalace serve` processes on loopback (docs/logstream.md §8,
 * issue 17): each server's own sync loop pulls from the other through `/sync/*` with a bearer
 * token from its peers file. Two embedded palaces, and an embedded palace with a cluster palace
 * (Redis logstream, OpenSearch, Neo4j, Temporal all real). Events flow both ways with their ids
 * preserved, an artifact follows the event citing it, a restarted server pulls nothing twice,
 * and a partition heals: with one server stopped, both sides append (the stopped side through
 * its store, as another agent's stdio server would), and after the restart both converge.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import { openSqliteLogstream } from '../../stores/embedded/logstream/sqlite-logstream.js';
import { openRedisLogstream } from '../../stores/redis/logstream/redis-logstream.js';
import type { LogstreamStore } from '../../stores/ports/palace-stores.js';
import type { StoredEvent } from '../../stores/ports/logstream/records.js';
import { eventAppend } from '../../palace/logstream/logstream.js';
import { Served, peerEntry, until, writePeersFile } from '../helpers/mesh-serve.js';
import { dropClusterPalace } from '../helpers/cluster-palace.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mempalace-mesh-'));
const PEER_TOKEN = `peer-${randomBytes(8).toString('hex')}`;
const ADMIN_TOKEN = `admin-${randomBytes(8).toString('hex')}`;
const base = { type: 'status.update', stream: 'project/mesh', room: 'status', from_agent: 'ops' };

const served = (name: string, palaceDir: string, env: Record<string, string>) =>
  new Served({ name, palaceDir, env, adminToken: ADMIN_TOKEN, peerToken: PEER_TOKEN, entityRegistry: path.join(tmp, 'none.json') });
const append = async (s: Served, args: Record<string, unknown>) => (await s.tool('mempalace_event_append', { ...base, ...args })).event as StoredEvent;

/** The peers file of `server`: `peer` with its token, replica id and public key (issue 24: keys come only from here). */
async function writePeers(server: Served, peer: Served): Promise<void> {
  writePeersFile(server, { peers: [await peerEntry(peer)] });
}

const idsOf = (events: StoredEvent[]) => events.map((e) => e.id).sort();

/** Both servers hold exactly `expected` (by id), each id once, with identical authorship fields. */
async function converged(x: Served, y: Served, expected: string[]): Promise<boolean> {
  const [ex, ey] = [await x.events(), await y.events()];
  const want = [...expected].sort();
  if (JSON.stringify(idsOf(ex)) !== JSON.stringify(want) || JSON.stringify(idsOf(ey)) !== JSON.stringify(want)) return false;
  const strip = ({ seq: _seq, ...rest }: StoredEvent) => rest;
  const byId = new Map(ey.map((e) => [e.id, strip(e)]));
  for (const e of ex) expect(strip(e)).toEqual(byId.get(e.id));
  return true;
}

async function appendThroughStore(logstream: LogstreamStore, body: string): Promise<StoredEvent> {
  return (await eventAppend({ logstream, mesh: { replicaName: 'offline' } }, { ...base, body })).event;
}

const servers: Served[] = [];
afterAll(async () => {
  await Promise.allSettled(servers.map((s) => s.stop()));
  fs.rmSync(tmp, { recursive: true, force: true });
});

/**
 * The scenario for a pair of servers: both ways, an artifact, restart without duplicates, and a
 * healed partition. `offline` opens the stopped side's store directly.
 */
async function meshScenario(x: Served, y: Served, offline: () => Promise<LogstreamStore>): Promise<void> {
  await x.start();
  await y.start();
  await writePeers(x, y);
  await writePeers(y, x);

  const expected: string[] = [];
  for (const s of [x, y]) for (let i = 0; i < 3; i++) expected.push((await append(s, { body: `${s.spec.name} ${i}` })).id);
  const patch = (await x.tool('mempalace_patch_submit', { stream: 'project/mesh', from_agent: 'ops', content: 'diff --git a/f b/f\n+mesh\n' })) as {
    artifact: { id: string; sha256: string };
    event: StoredEvent;
  };
  expected.push(patch.event.id);
  await until('both ways', () => converged(x, y, expected));
  expect(await y.tool('mempalace_artifact_get', { artifact_id: patch.artifact.id })).toMatchObject({
    artifact: { id: patch.artifact.id, sha256: patch.artifact.sha256, content: 'diff --git a/f b/f\n+mesh\n' },
  });
  const [xId, yId] = [(await x.estate()).self.replica_id, (await y.estate()).self.replica_id];
  const onY = (await y.events()).find((e) => e.id === expected[0])!;
  expect(onY.origin_replica).toBe(xId);

  // The estate of each side names the other, reachable, with nothing left to pull.
  const peerOfX = await until('x reports y synced', async () => {
    const p = (await x.estate()).peers[0];
    return p?.reachable === true && p.lag_events === 0 ? p : undefined;
  });
  expect(peerOfX).toMatchObject({ name: y.spec.name, url: y.url, replica_id: yId, last_error: null });
  expect(JSON.stringify(await x.estate())).not.toContain(PEER_TOKEN);
  const viaHttp = await fetch(`${x.url}/sync/peers`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(viaHttp.status).toBe(200);
  // The peers' replicate token pulls the log and reads nothing else, the estate included.
  expect((await fetch(`${x.url}/sync/peers`, { headers: { authorization: `Bearer ${PEER_TOKEN}` } })).status).toBe(403);
  expect(peerOfX.refusals).toEqual([]);
  expect(((await viaHttp.json()) as { self: { replica_id: string } }).self.replica_id).toBe(xId);
  expect((await fetch(`${x.url}/sync/version_vector`)).status).toBe(401);

  // Restart y: its loop resumes from the stored vector and duplicates nothing.
  const vectorBefore = (await y.estate()).self.version_vector;
  await y.stop();
  await y.start();
  const restartedAt = new Date(Date.now() - 1000).toISOString().slice(0, 19);
  await until('y synced again after its restart', async () => {
    const p = (await y.estate()).peers[0];
    return typeof p?.last_success_at === 'string' && p.last_success_at.slice(0, 19) >= restartedAt && p.reachable === true;
  });
  expect(await converged(x, y, expected)).toBe(true);
  expect((await y.estate()).self.version_vector).toEqual(vectorBefore);

  // Partition: y stops; x appends through its server, y through its store; then y returns.
  await y.stop();
  expected.push((await append(x, { body: 'x during partition' })).id);
  await until('x sees y unreachable', async () => (await x.estate()).peers[0]?.reachable === false);
  const store = await offline();
  try {
    expected.push((await appendThroughStore(store, 'y during partition 1')).id);
    expected.push((await appendThroughStore(store, 'y during partition 2')).id);
  } finally {
    await store.close();
  }
  await y.start();
  await until('the partition heals', () => converged(x, y, expected));
  const healed = await until('x reports y reachable again', async () => {
    const p = (await x.estate()).peers[0];
    return p?.reachable === true ? p : undefined;
  });
  expect(healed.last_error).toBeNull();
  expect(typeof healed.last_error_at).toBe('string');
}

describe('logstream mesh between real servers', () => {
  it('two embedded palaces exchange events both ways, survive a restart without duplicates, and heal a partition', async () => {
    const x = served(`emb-x-${randomBytes(3).toString('hex')}`, path.join(tmp, 'x'), { MEMPALACE_PROFILE: 'embedded' });
    const y = served(`emb-y-${randomBytes(3).toString('hex')}`, path.join(tmp, 'y'), { MEMPALACE_PROFILE: 'embedded' });
    servers.push(x, y);
    await meshScenario(x, y, () => openSqliteLogstream(y.spec.palaceDir));
    await Promise.all([x.stop(), y.stop()]);
  });

  it('an embedded palace and a cluster palace (Redis logstream) do the same', async () => {
    const palaceName = `mesh-${randomBytes(5).toString('hex')}`;
    const config = loadConfig({ ...process.env, MEMPALACE_PROFILE: 'cluster', MEMPALACE_PALACE: path.join(tmp, 'c'), MEMPALACE_PALACE_NAME: palaceName });
    const e = served(`emb-${randomBytes(3).toString('hex')}`, path.join(tmp, 'e'), { MEMPALACE_PROFILE: 'embedded' });
    const c = served(`cluster-${randomBytes(3).toString('hex')}`, config.palaceDir, { MEMPALACE_PROFILE: 'cluster', MEMPALACE_PALACE_NAME: palaceName });
    servers.push(e, c);
    try {
      await meshScenario(e, c, () => openRedisLogstream({ url: config.redis.url, palaceName }));
    } finally {
      await Promise.all([e.stop(), c.stop()]);
      await dropClusterPalace(config);
    }
  });
});
