/**
 * The replication half of the logstream contract (logstream.md §7.3, §8.2–§8.7, §12 items 18
 * and 19), run against every adapter of the `Logstream` port: the port methods behind the
 * pull endpoints and the remote apply, and whole anti-entropy rounds between replicas of the
 * same adapter. Replicas talk through an in-process transport that calls the same palace
 * functions the `/sync/*` routes call; the HTTP path itself is covered by tests/e2e/mesh.test.ts.
 */
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as ops from '../../palace/logstream.js';
import type { LogstreamContext } from '../../palace/logstream.js';
import { meshEstate } from '../../palace/logstream-estate.js';
import { MeshReplicator } from '../../palace/logstream-replicator.js';
import { pullFromPeer, remoteArtifact, remoteEvent, syncArtifact, type SyncPeer } from '../../palace/logstream-sync.js';
import type { Locks } from '../../stores/ports/locks.js';
import type { Logstream, StoredEvent } from '../../stores/ports/logstream.js';
import { rejectionOf } from '../helpers/errors.js';
import { capturedLogger, quietLogger } from '../helpers/log.js';
import { InProcessTransport } from '../helpers/sync-transport.js';

export interface OpenedReplica {
  logstream: Logstream;
  locks: Locks;
  cleanup(): Promise<void>;
}

const base = { type: 'status.update', stream: 'project/atlas', room: 'status', from_agent: 'mac-claude' };
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

export function describeLogstreamSyncContract(adapterName: string, open: (replicaId?: string) => Promise<OpenedReplica>): void {
  describe(`Logstream replication contract — ${adapterName}`, () => {
    let replicas: OpenedReplica[];
    let a: Logstream;
    let b: Logstream;
    let c: Logstream;
    let transport: InProcessTransport;
    const peer = (name: string): SyncPeer => ({ name, url: `mem://${name}` });
    const ctx = (logstream: Logstream): LogstreamContext => ({ logstream, mesh: { replicaName: 'contract-node' } });
    const append = async (logstream: Logstream, args: Record<string, unknown> = {}) => (await ops.eventAppend(ctx(logstream), { ...base, ...args })).event;
    const all = async (logstream: Logstream) => (await ops.eventList(ctx(logstream), { limit: 500 })).events;
    const byId = (events: StoredEvent[]) => new Map(events.map((e) => [e.id, e]));
    const verbatim = ({ seq: _seq, ...rest }: StoredEvent) => rest;

    beforeEach(async () => {
      replicas = [await open(), await open(), await open()];
      [a, b, c] = replicas.map((r) => r.logstream) as [Logstream, Logstream, Logstream];
      transport = new InProcessTransport(new Map([['a', a], ['b', b], ['c', c]]));
    });
    afterEach(async () => {
      await Promise.all(replicas.map((r) => r.cleanup()));
    });

    describe('port methods', () => {
      it('opsAfter serves an origin’s events after a cursor in ascending origin_seq, and applyRemoteEvent stores them verbatim with a new seq', async () => {
        await append(b, { body: 'local on b first' });
        const sent = [await append(a, { body: 'one' }), await append(a, { body: 'two\nlines', metadata: { nested: { k: [1, 2] } }, topic: 'auth-v2', to_agent: '*' }), await append(a, { body: 'three' })];
        const origin = await a.replicaId();
        expect((await a.opsAfter(origin, 0, 500)).map((e) => e.id)).toEqual(sent.map((e) => e.id));
        expect((await a.opsAfter(origin, sent[0]!.origin_seq, 1)).map((e) => e.id)).toEqual([sent[1]!.id]);
        expect(await a.opsAfter('rep_000000000000', 0, 500)).toEqual([]);

        for (const e of await a.opsAfter(origin, 0, 500)) expect(await b.applyRemoteEvent(remoteEvent(e))).toBe('applied');
        const onB = byId(await all(b));
        for (const e of sent) {
          const copy = onB.get(e.id)!;
          expect(verbatim(copy)).toEqual(verbatim({ ...e, artifact_ids: [...e.artifact_ids].sort() }));
        }
        // The late arrivals got new, higher local seqs; b's own event keeps seq 1.
        expect([...onB.values()].map((e) => e.seq)).toEqual([1, 2, 3, 4]);
        expect((await b.versionVector())[origin]).toBe(sent[2]!.origin_seq);
        // They are served onward by b under their origin (transitive propagation).
        expect((await b.opsAfter(origin, 0, 500)).map((e) => e.id)).toEqual(sent.map((e) => e.id));
      });

      it('skips duplicates by id and by (origin_replica, origin_seq), and its own echo, writing nothing', async () => {
        const e = await append(a);
        const remote = remoteEvent(e);
        expect(await b.applyRemoteEvent(remote)).toBe('applied');
        expect(await b.applyRemoteEvent(remote)).toBe('duplicate');
        expect(await b.applyRemoteEvent({ ...remote, id: 'evt_20260101T000000_aaaaaaaaaaaa' })).toBe('duplicate');
        expect(await b.applyRemoteEvent({ ...remote, origin_seq: remote.origin_seq + 100 })).toBe('duplicate');
        expect(await a.applyRemoteEvent(remote)).toBe('own_origin');
        expect((await all(b)).length).toBe(1);
        expect((await all(a)).length).toBe(1);
      });

      it('refuses an event whose artifact is not held, and keeps artifacts verbatim (id, created_at, origin) once applied', async () => {
        const { artifact, event } = await ops.patchSubmit(ctx(a), { stream: 'project/atlas', from_agent: 'mac-claude', content: 'diff --git a/x b/x\n' });
        const remote = remoteEvent((await a.opsAfter(await a.replicaId(), 0, 10))[0]);
        const refusal = await rejectionOf(b.applyRemoteEvent(remote));
        expect(refusal).toMatchObject({ code: 'not_found', rule: 'known_artifact', details: { artifact_id: artifact.id } });
        expect(await all(b)).toEqual([]);
        expect(await b.hasArtifact(artifact.id)).toBe(false);

        const served = (await syncArtifact(a, { id: artifact.id })).artifact;
        expect(await b.applyRemoteArtifact(remoteArtifact(served))).toBe(true);
        expect(await b.applyRemoteArtifact(remoteArtifact(served))).toBe(false);
        expect(await b.hasArtifact(artifact.id)).toBe(true);
        expect(await b.getArtifact(artifact.id)).toEqual(await a.getArtifact(artifact.id));
        expect(await b.applyRemoteEvent(remote)).toBe('applied');
        expect((await b.getEvent(event.id))?.artifact_ids).toEqual([artifact.id]);
      });

      it('observes the remote hlc: the next local append sorts after it; a stamp over 60 s ahead is stored but not adopted', async () => {
        const e = await append(a);
        const ahead = `${String(Date.now() + 30_000).padStart(13, '0')}-00000a-${await a.replicaId()}`;
        expect(await b.applyRemoteEvent({ ...remoteEvent(e), hlc: ahead })).toBe('applied');
        const next = await append(b);
        expect(next.hlc > ahead).toBe(true);
        const bogus = `${String(Date.now() + 3_600_000).padStart(13, '0')}-000000-${await a.replicaId()}`;
        expect(await c.applyRemoteEvent({ ...remoteEvent(await append(a)), hlc: bogus })).toBe('applied');
        expect((await c.getEvent((await all(c))[0]!.id))?.hlc).toBe(bogus);
        expect((await append(c)).hlc < bogus).toBe(true);
      });

      it('wakes a waiter on a replicated event well before its timeout (§12.11)', async () => {
        const e = await append(a, { to_agent: 'worker-9' });
        const waiting = ops.eventWait(ctx(b), { to_agent: 'worker-9', timeout_ms: 60_000 });
        await new Promise((r) => setTimeout(r, 100));
        expect(await b.applyRemoteEvent(remoteEvent(e))).toBe('applied');
        const woken = await waiting;
        expect(woken).toMatchObject({ timed_out: false, count: 1 });
        expect(woken.events[0]!.id).toBe(e.id);
      });

      it('keeps the published mesh state for every process of the palace', async () => {
        expect(await a.readMeshState()).toEqual({ peers: {}, profiles: {}, published_at: null });
        const state = { peers: { desktop: { url: 'http://desktop', reachable: false, remote_version_vector: { rep_x: 3 } } }, profiles: { rep_x: { advertised_at: '2026-01-01T00:00:00Z' } }, published_at: '2026-01-01T00:00:01Z' };
        await a.publishMeshState(state);
        expect(await a.readMeshState()).toEqual(state);
        await a.publishMeshState({ peers: {}, profiles: {}, published_at: '2026-01-01T00:00:02Z' });
        expect(await a.readMeshState()).toEqual({ peers: {}, profiles: {}, published_at: '2026-01-01T00:00:02Z' });
      });
    });

    describe('sync rounds (§12.18)', () => {
      it('two replicas converge both ways, artifacts land before the events citing them, and a second round pulls nothing', async () => {
        await append(a, { body: 'from a' });
        const patch = await ops.patchSubmit(ctx(a), { stream: 'project/atlas', from_agent: 'mac-claude', content: 'patch body\n' });
        await append(b, { body: 'from b' });
        const ab = await pullFromPeer(a, transport, peer('b'));
        const ba = await pullFromPeer(b, transport, peer('a'));
        expect(ab).toMatchObject({ pulled_events: 1, pulled_artifacts: 0, peer_replica: await b.replicaId() });
        expect(ba).toMatchObject({ pulled_events: 2, pulled_artifacts: 1, per_origin: { [await a.replicaId()]: 2 } });
        expect(transport.calls.filter((call) => call.startsWith('a/sync/artifact'))).toEqual([`a/sync/artifact?id=${patch.artifact.id}`]);
        expect((await b.getEvent(patch.event.id))?.artifact_ids).toEqual([patch.artifact.id]);
        expect(await b.getArtifact(patch.artifact.id)).toMatchObject({ sha256: sha256('patch body\n'), content: 'patch body\n' });
        const idsA = (await all(a)).map((e) => e.id).sort();
        expect((await all(b)).map((e) => e.id).sort()).toEqual(idsA);
        expect(await a.versionVector()).toEqual(await b.versionVector());

        transport.calls.length = 0;
        expect(await pullFromPeer(a, transport, peer('b'))).toMatchObject({ pulled_events: 0, pulled_artifacts: 0 });
        expect(await pullFromPeer(b, transport, peer('a'))).toMatchObject({ pulled_events: 0, pulled_artifacts: 0 });
        expect(transport.calls).toEqual(['b/sync/version_vector', 'a/sync/version_vector']);
      });

      it('refuses a tampered artifact and applies neither it nor its event; the next clean round completes', async () => {
        const patch = await ops.patchSubmit(ctx(a), { stream: 'project/atlas', from_agent: 'mac-claude', content: 'exact bytes\n' });
        transport.tamper.add(patch.artifact.id);
        const failure = await rejectionOf(pullFromPeer(b, transport, peer('a')));
        expect((failure as Error).message).toMatch(new RegExp(`^remote artifact '${patch.artifact.id}' failed hash verification \\(claimed [0-9a-f]{16}\\.\\.\\., computed [0-9a-f]{16}\\.\\.\\.\\)$`));
        expect(await b.hasArtifact(patch.artifact.id)).toBe(false);
        expect(await all(b)).toEqual([]);
        transport.tamper.clear();
        expect(await pullFromPeer(b, transport, peer('a'))).toMatchObject({ pulled_events: 1, pulled_artifacts: 1 });
      });

      it('a partition with two claims converges, and both sides pick the same lowest-hlc winner', async () => {
        const task = await append(a, { type: 'task.request', correlation_id: 'task_x_00000000', status: 'open' });
        await pullFromPeer(b, transport, peer('a'));
        // Partitioned: both sides claim.
        const claimA = (await ops.eventAck(ctx(a), { event_id: task.id, from_agent: 'worker-1', status: 'claimed' })).event;
        const claimB = (await ops.eventAck(ctx(b), { event_id: task.id, from_agent: 'worker-2', status: 'claimed' })).event;
        await pullFromPeer(a, transport, peer('b'));
        await pullFromPeer(b, transport, peer('a'));
        const winner = async (logstream: Logstream) => {
          const claims = (await ops.eventList(ctx(logstream), { correlation_id: 'task_x_00000000', status: 'claimed' })).events;
          expect(claims.length).toBe(2);
          return [...claims].sort((x, y) => (x.hlc < y.hlc ? -1 : 1))[0]!.id;
        };
        const expected = claimA.hlc < claimB.hlc ? claimA.id : claimB.id;
        expect(await winner(a)).toBe(expected);
        expect(await winner(b)).toBe(expected);
      });

      it('three replicas where A and C only know B converge, and C appears in A’s unnamed_origins', async () => {
        const fromA = await append(a, { body: 'a' });
        const fromC = await append(c, { body: 'c' });
        await pullFromPeer(b, transport, peer('a'));
        await pullFromPeer(b, transport, peer('c'));
        await pullFromPeer(a, transport, peer('b'));
        await pullFromPeer(c, transport, peer('b'));
        for (const r of [a, b, c]) expect((await all(r)).map((e) => e.id).sort()).toEqual([fromA.id, fromC.id].sort());
        const replicator = new MeshReplicator({
          logstream: () => a, locks: () => replicas[0]!.locks, peers: async () => [peer('b')], transport, intervalMs: 60_000,
          mesh: { replicaName: 'a' }, log: quietLogger(),
        });
        await replicator.round();
        const estate = await meshEstate(a, { replicaName: 'a', peers: async () => [{ name: 'b', url: 'mem://b' }], locks: replicas[0]!.locks });
        expect(estate.unnamed_origins).toEqual([await c.replicaId()]);
        expect(Object.keys(estate.origin_profiles).sort()).toEqual([await a.replicaId(), await b.replicaId()].sort());
        await replicator.stop();
      });
    });

    describe('restores (§10.7, D5)', () => {
      it('a replica restored behind its peers mints no origin_seq they hold, pulls its own events back, and its new events reach them', async () => {
        const patch = async () => (await ops.patchSubmit(ctx(a), { stream: 'project/atlas', from_agent: 'mac-claude', content: 'a2 patch\n' }));
        const first = await append(a, { body: 'a1' });
        const second = await patch();
        const sent = [first, (await a.getEvent(second.event.id))!, await append(a, { body: 'a3' })];
        await append(b, { body: 'b1' });
        await pullFromPeer(b, transport, peer('a'));
        const restoredReplica = await open(await a.replicaId());
        replicas.push(restoredReplica);
        const restored = restoredReplica.logstream;
        expect(await restored.replicaId()).toBe(await a.replicaId());
        expect(await all(restored)).toEqual([]);
        transport.replicas.set('a', restored);

        // The first pull back breaks off at a corrupt transfer of a2's artifact, after a1 came back.
        const logs = capturedLogger();
        transport.tamper.add(second.artifact.id);
        await expect(pullFromPeer(restored, transport, peer('b'), logs.log)).rejects.toThrow('failed hash verification');
        expect(logs.records.filter((r) => r.level === 40).map((r) => r.msg).join('\n')).toContain('WARNING');
        // An agent appends before the next round: the number must be above every one b holds.
        const fresh = await append(restored, { body: 'after the restore' });
        expect(fresh.origin_seq).toBeGreaterThan(sent[2]!.origin_seq);
        expect(fresh.origin_seq).toBe(fresh.seq);
        transport.tamper.clear();
        await pullFromPeer(restored, transport, peer('b'));
        const back = byId(await all(restored));
        for (const e of sent) expect(verbatim(back.get(e.id)!)).toEqual(verbatim(e));
        expect(await pullFromPeer(b, transport, peer('a'))).toMatchObject({ pulled_events: 1 });
        expect((await b.getEvent(fresh.id))?.body).toBe('after the restore');
        expect(await restored.reserveOwnSeqAbove(1)).toBe(false);
      });
    });

    describe('sync loop and estate (§8.7, §12.19)', () => {
      it('publishes peer records with lag; a failed peer keeps its last profile and vector and is retried with backoff', async () => {
        const logs = capturedLogger();
        const replicator = new MeshReplicator({
          logstream: () => a, locks: () => replicas[0]!.locks, peers: async () => [{ ...peer('b'), token: 'secret-token-123' }], transport, intervalMs: 60_000,
          mesh: { replicaName: 'a' }, log: logs.log,
        });
        const estateOpts = { replicaName: 'a', peers: async () => [{ name: 'b', url: 'mem://b' }], locks: replicas[0]!.locks };
        await append(b);
        await append(b);
        await replicator.round();
        const ok = await meshEstate(a, estateOpts);
        expect(ok.estate_source).toMatchObject({ in_process: true, writer_alive: true });
        expect(ok.estate_source.published_at).toMatch(/Z$/);
        const synced = ok.peers[0]!;
        expect(synced).toMatchObject({ name: 'b', url: 'mem://b', replica_id: await b.replicaId(), reachable: true, last_error: null, last_pulled_events: 2, lag_events: 0, consecutive_failures: 0 });
        expect(synced.remote_version_vector).toEqual({ [await b.replicaId()]: 2 });
        const profile = synced.profile;
        expect(profile).toMatchObject({ roles: ['agents'] });

        await append(b);
        transport.down.add('b');
        await replicator.round();
        const failed = (await meshEstate(a, estateOpts)).peers[0]!;
        expect(failed).toMatchObject({ reachable: false, last_success_at: synced.last_success_at, profile, remote_version_vector: synced.remote_version_vector, consecutive_failures: 1 });
        expect(String(failed.last_error)).toContain('mem://b');
        expect(typeof failed.retry_at).toBe('string');
        // Within the backoff the peer is not attempted again.
        const callsBefore = transport.calls.length;
        transport.down.delete('b');
        await replicator.round();
        expect(transport.calls.length).toBe(callsBefore);
        expect(JSON.stringify(await meshEstate(a, estateOpts))).not.toContain('secret-token-123');
        expect(JSON.stringify(await a.readMeshState())).not.toContain('secret-token-123');
        expect(JSON.stringify(logs.records)).not.toContain('secret-token-123');
        await replicator.stop();
        expect((await meshEstate(a, estateOpts)).estate_source).toMatchObject({ in_process: false, writer_alive: false });
      });

      it('runs rounds in one holder only: a second replicator of the same palace does not pull while the first holds the lease', async () => {
        await append(b);
        const make = () => new MeshReplicator({ logstream: () => a, locks: () => replicas[0]!.locks, peers: async () => [peer('b')], transport, intervalMs: 60_000, mesh: { replicaName: 'a' }, log: quietLogger() });
        const first = make();
        const second = make();
        expect((await first.round()).length).toBe(1);
        expect(await second.round()).toEqual([]);
        await first.stop();
        expect((await second.round()).length).toBe(1);
        await second.stop();
      });
    });
  });
}
