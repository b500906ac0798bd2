/**
 * The pure parts of the logstream mesh (docs/logstream.md §7.3, §8.3–§8.10): sync settings, the
 * transport choice, parameter and remote-record checks with the spec's messages, backoff,
 * profile merging and url redaction.
 */
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import { backoffMs, mergeProfiles, MAX_BACKOFF_MS } from '../../palace/logstream/replicator.js';
import { remoteArtifact, remoteEvent } from '../../palace/logstream/remote.js';
import { artifactSignatureValid, eventSignatureValid, parsePublicKey, publicKeyText, signArtifact, signEvent } from '../../palace/logstream/signature.js';
import { peerLabel, syncArtifact, syncOps } from '../../palace/logstream/sync.js';
import { syncTransport } from '../../palace/logstream/transport.js';
import { readOriginKeys, readPeersFile } from '../../stores/shared/logstream/peers-file.js';
import type { LogstreamReplication } from '../../stores/ports/logstream/replication.js';

const noStore = { replicaId: async () => 'rep_000000000009', opsAfter: async () => [], getArtifact: async () => null } as unknown as LogstreamReplication;
const event = { id: 'evt_1', type: 't', stream: 's', room: 'r', from_agent: 'a', created_at: '2026-01-01T00:00:00Z', origin_replica: 'rep_000000000001',
  origin_seq: 3, hlc: '1767225600000-000000-rep_000000000001' };

describe('sync settings (docs/logstream.md §8.3, §8.6, §8.10)', () => {
  it('reads interval, timeout, peers file and transport with the spec’s defaults', () => {
    const d = loadConfig({ HOME: '/tmp/h', MEMPALACE_PALACE: '/tmp/p' });
    expect(d.sync).toEqual({ intervalS: 15, httpTimeoutS: 30, peersFile: '/tmp/p/peers.json', transport: 'https' });
    expect(loadConfig({ MEMPALACE_SYNC_INTERVAL: '0' }).sync.intervalS).toBe(0);
    expect(loadConfig({ MEMPALACE_SYNC_INTERVAL: '-5' }).sync.intervalS).toBe(0);
    expect(loadConfig({ MEMPALACE_SYNC_INTERVAL: 'soon' }).sync.intervalS).toBe(15);
    expect(loadConfig({ MEMPALACE_SYNC_INTERVAL: '0.5' }).sync.intervalS).toBe(0.5);
    expect(loadConfig({ MEMPALACE_SYNC_HTTP_TIMEOUT: 'x' }).sync.httpTimeoutS).toBe(30);
    expect(loadConfig({ MEMPALACE_PEERS_FILE: '/run/secrets/peers.json' }).sync.peersFile).toBe('/run/secrets/peers.json');
  });

  it('fails loudly on any transport but https, including the reserved meshguard', () => {
    expect(() => syncTransport('meshguard', 1000)).toThrow('MEMPALACE_TRANSPORT=meshguard is not supported; the only transport is https');
    expect(syncTransport('https', 1000)).toBeDefined();
  });

  it('reads the peers file with the spec’s errors', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mp-peers-'));
    const file = path.join(dir, 'peers.json');
    expect(readPeersFile(file)).toEqual([]);
    fs.writeFileSync(file, JSON.stringify({ peers: [{ url: 'http://a', token: 't' }, { name: 'b', url: 'http://b' }] }));
    expect(readPeersFile(file)).toEqual([{ name: 'http://a', url: 'http://a', token: 't' }, { name: 'b', url: 'http://b' }]);
    fs.writeFileSync(file, JSON.stringify({ peers: {} }));
    expect(() => readPeersFile(file)).toThrow(`${file}: 'peers' must be a list`);
    fs.writeFileSync(file, JSON.stringify({ peers: [{ name: 'x' }] }));
    expect(() => readPeersFile(file)).toThrow(`${file}: every peer needs at least a 'url'`);
    fs.writeFileSync(file, '{');
    expect(() => readPeersFile(file)).toThrow(`${file} is malformed:`);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('pull endpoint parameters (docs/logstream.md §7.3)', () => {
  it('refuses bad parameters with the spec’s messages', async () => {
    await expect(syncOps(noStore, {})).rejects.toThrow('origin must be a non-empty string');
    await expect(syncOps(noStore, { origin: 'rep_x', after: '-1' })).rejects.toThrow('after_seq must be a non-negative integer');
    await expect(syncOps(noStore, { origin: 'rep_x', limit: '0' })).rejects.toThrow('limit must be a positive integer');
    await expect(syncOps(noStore, { origin: 'rep_x', after: '1.5' })).rejects.toMatchObject({ code: 'invalid_argument', field: 'after' });
    await expect(syncArtifact(noStore, { id: '' })).rejects.toThrow('artifact_id must be a non-empty string');
    await expect(syncArtifact(noStore, { id: 'art_x' })).rejects.toMatchObject({ code: 'not_found', message: "artifact 'art_x' not found" });
    expect(await syncOps(noStore, { origin: 'rep_x' })).toEqual({ origin: 'rep_x', events: [], count: 0 });
  });
});

describe('remote records pass the local validators (issue 24, M4; overrides docs/logstream.md §8.4 "stored as received")', () => {
  it('names the field and rule of every required field missing from an event', () => {
    for (const field of Object.keys(event)) {
      expect(() => remoteEvent({ ...event, [field]: '' }), field).toThrow(expect.objectContaining({ code: 'invalid_argument', field }));
    }
    const stored = remoteEvent({ ...event, metadata: { b: 1, a: [2] }, topic: ' lane ', artifact_ids: ['art_2', 'art_1', 'art_2'] });
    expect(stored).toMatchObject({ metadata_json: '{"a": [2], "b": 1}', topic: 'lane', artifact_ids: ['art_2', 'art_1'], origin_seq: 3 });
  });

  it('refuses what a local append would refuse: NUL in from_agent, a date that is not one, bodies and metadata over the limits, bad types and statuses', () => {
    const refused = (patch: Record<string, unknown>) => {
      try {
        remoteEvent({ ...event, ...patch });
      } catch (e) {
        return { field: (e as { field?: string }).field, rule: (e as { rule?: string }).rule };
      }
      return null;
    };
    expect(refused({ from_agent: 'ali\u0000ce' })).toEqual({ field: 'from_agent', rule: 'control_characters' });
    expect(refused({ created_at: 'not a date' })).toEqual({ field: 'created_at', rule: 'utc_instant' });
    expect(refused({ created_at: '2026-02-30T00:00:00Z' })).toEqual({ field: 'created_at', rule: 'utc_instant' });
    expect(refused({ body: 'x'.repeat(262_145) })).toEqual({ field: 'body', rule: 'max_bytes' });
    expect(refused({ body: 'a\u0000b' })).toEqual({ field: 'body', rule: 'null_bytes' });
    expect(refused({ metadata: { k: 'x'.repeat(70_000) } })).toEqual({ field: 'metadata', rule: 'max_bytes' });
    expect(refused({ type: 'Not A Type' })).toEqual({ field: 'type', rule: 'event_type_pattern' });
    expect(refused({ status: 'done' })).toEqual({ field: 'status', rule: 'one_of' });
    expect(refused({ origin_replica: '../../x' })).toEqual({ field: 'origin_replica', rule: 'replica_id' });
    expect(refused({ origin_seq: 2 ** 53 })).toEqual({ field: 'origin_seq', rule: 'safe_integer' });
    expect(refused({ hlc: '1767225600000-000000-rep_00000000000f' })).toEqual({ field: 'hlc', rule: 'hlc_of_origin' });
    expect(refused({ stream: 'x'.repeat(257) })).toEqual({ field: 'stream', rule: 'max_length' });
    expect(refused({ prev_origin_seq: 3, sig: 'a'.repeat(86) })).toEqual({ field: 'prev_origin_seq', rule: 'below_origin_seq' });
    // A stream is a name, never a path: local appends accept '../../x' too, so a remote one is held to the same rule.
    expect(refused({ stream: '../../x' })).toBeNull();
  });

  it('verifies an artifact’s hash, recomputes its size and applies the artifact validators', () => {
    const artifact = { id: 'art_1', kind: 'note', sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824', content: 'hello', created_by: 'a',
      created_at: '2026-01-01T00:00:00Z', size_bytes: 99 };
    expect(remoteArtifact(artifact)).toMatchObject({ size_bytes: 5, origin_replica: null, metadata_json: '{}' });
    expect(() => remoteArtifact({ ...artifact, content: 'hellO' })).toThrow(
      /^remote artifact 'art_1' failed hash verification \(claimed 2cf24dba5fb0a30e\.\.\., computed [0-9a-f]{16}\.\.\.\)$/,
    );
    expect(() => remoteArtifact({ ...artifact, created_by: undefined })).toThrow(expect.objectContaining({ field: 'created_by' }));
    expect(() => remoteArtifact({ ...artifact, kind: 'binary' })).toThrow(expect.objectContaining({ field: 'kind', rule: 'one_of' }));
  });
});

describe('origin signatures (issue 24, M1)', () => {
  const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const other = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const signed = { ...remoteEvent(event), metadata_json: '{}' };

  it('binds every field and the chain link: a changed writer, body, origin_seq or prev fails', () => {
    const key = parsePublicKey(publicKeyText(pem), 'public_key');
    const sig = signEvent(pem, signed, 2);
    expect(signEvent(pem, signed, 2)).toBe(sig);
    expect(eventSignatureValid(key, signed, 2, sig)).toBe(true);
    expect(eventSignatureValid(key, { ...signed, from_agent: 'alice' }, 2, sig)).toBe(false);
    expect(eventSignatureValid(key, { ...signed, body: 'rotate the prod credentials' }, 2, sig)).toBe(false);
    expect(eventSignatureValid(key, { ...signed, origin_seq: 1_000_000 }, 2, sig)).toBe(false);
    expect(eventSignatureValid(key, signed, 0, sig)).toBe(false);
    expect(eventSignatureValid(parsePublicKey(publicKeyText(other), 'public_key'), signed, 2, sig)).toBe(false);
    const artifact = { id: 'art_1', kind: 'patch', sha256: 'a'.repeat(64), size_bytes: 3, created_by: 'alice', created_at: '2026-01-01T00:00:00Z',
      origin_replica: 'rep_000000000001', metadata_json: '{}' };
    const asig = signArtifact(pem, artifact);
    expect(artifactSignatureValid(key, artifact, asig)).toBe(true);
    expect(artifactSignatureValid(key, { ...artifact, sha256: 'b'.repeat(64) }, asig)).toBe(false);
  });

  it('reads public keys from the peers file: per peer and for origins reached only transitively, one key per replica', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mp-peers-keys-'));
    const file = path.join(dir, 'peers.json');
    const [k1, k2] = [publicKeyText(pem), publicKeyText(other)];
    fs.writeFileSync(file,
      JSON.stringify({ peers: [{ name: 'b', url: 'http://b', replica_id: 'rep_00000000000b', public_key: k1 }],
        origins: [{ replica_id: 'rep_00000000000c', public_key: k2 }] }));
    expect(readPeersFile(file)).toEqual([{ name: 'b', url: 'http://b', replica_id: 'rep_00000000000b', public_key: k1 }]);
    expect(readOriginKeys(file)).toEqual({ rep_00000000000b: k1, rep_00000000000c: k2 });
    fs.writeFileSync(file,
      JSON.stringify({ peers: [{ url: 'http://b', replica_id: 'rep_00000000000b', public_key: k1 }],
        origins: [{ replica_id: 'rep_00000000000b', public_key: k2 }] }));
    expect(() => readOriginKeys(file)).toThrow(expect.objectContaining({ field: 'public_key', rule: 'one_key_per_replica' }));
    fs.writeFileSync(file, JSON.stringify({ peers: [{ url: 'http://b', public_key: k1 }] }));
    expect(() => readPeersFile(file)).toThrow(expect.objectContaining({ field: 'replica_id' }));
    fs.writeFileSync(file, JSON.stringify({ peers: [{ url: 'http://b', replica_id: 'rep_00000000000b', public_key: 'ssh-ed25519 AAAA' }] }));
    expect(() => readPeersFile(file)).toThrow(expect.objectContaining({ field: 'public_key', rule: 'ed25519_public_key' }));
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('sync loop helpers', () => {
  it('backs off exponentially from one interval, capped at 16 intervals and 5 minutes', () => {
    expect([1, 2, 3, 4, 5, 9].map((n) => backoffMs(15_000, n))).toEqual([15_000, 30_000, 60_000, 120_000, 240_000, 240_000]);
    expect(backoffMs(60_000, 9)).toBe(MAX_BACKOFF_MS);
  });

  it('merges profiles last-writer-wins by advertised_at, never over self, ignoring junk', () => {
    const known: Record<string, Record<string, unknown>> = { rep_b: { advertised_at: '2026-01-01T00:00:05Z', v: 1 } };
    mergeProfiles(known, { rep_b: { advertised_at: '2026-01-01T00:00:05Z', v: 2 }, rep_c: { advertised_at: '2026-01-01T00:00:01Z' },
      rep_self: { advertised_at: '2099-01-01T00:00:00Z' }, rep_d: 'junk' }, 'rep_self');
    expect(known).toEqual({ rep_b: { advertised_at: '2026-01-01T00:00:05Z', v: 1 }, rep_c: { advertised_at: '2026-01-01T00:00:01Z' } });
    mergeProfiles(known, { rep_b: { advertised_at: '2026-01-01T00:00:06Z', v: 3 } }, 'rep_self');
    expect(known.rep_b?.v).toBe(3);
  });

  it('ignores a profile dated beyond the clock plus a minute, so a 9999 date cannot pin itself (issue 24, M4)', () => {
    const now = Date.parse('2026-06-01T00:00:00Z');
    const known: Record<string, Record<string, unknown>> = {};
    mergeProfiles(known, { rep_b: { advertised_at: '9999-12-31T23:59:59Z', v: 'forever' } }, 'rep_self', now);
    mergeProfiles(known, { rep_c: { advertised_at: '2026-06-01T00:00:59Z', v: 'skewed' }, rep_d: { advertised_at: '2026-06-01T00:01:01Z' },
      rep_e: { advertised_at: 'soon' } }, 'rep_self', now);
    expect(known).toEqual({ rep_c: { advertised_at: '2026-06-01T00:00:59Z', v: 'skewed' } });
    mergeProfiles(known, { rep_b: { advertised_at: '2026-05-31T00:00:00Z', v: 'honest' } }, 'rep_self', now);
    expect(known.rep_b?.v).toBe('honest');
  });

  it('removes user-info from peer urls in messages', () => {
    expect(peerLabel('https://user:pw@desktop.example.com/')).toBe('https://desktop.example.com');
    expect(peerLabel('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
  });
});
