/**
 * The pure parts of the logstream mesh (logstream.md §7.3, §8.3–§8.10): sync settings, the
 * transport choice, parameter and remote-record checks with the spec's messages, backoff,
 * profile merging and url redaction.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import { backoffMs, mergeProfiles, MAX_BACKOFF_MS } from '../../palace/logstream-replicator.js';
import { peerLabel, remoteArtifact, remoteEvent, syncArtifact, syncOps } from '../../palace/logstream-sync.js';
import { syncTransport } from '../../palace/logstream-transport.js';
import { readPeersFile } from '../../stores/embedded/logstream-peers.js';
import type { Logstream } from '../../stores/ports/logstream.js';
import { capturedLogger } from '../helpers/log.js';

const noStore = { opsAfter: async () => [], getArtifact: async () => null } as unknown as Logstream;
const event = { id: 'evt_1', type: 't', stream: 's', room: 'r', from_agent: 'a', created_at: '2026-01-01T00:00:00Z', origin_replica: 'rep_000000000001', origin_seq: 3, hlc: '1767225600000-000000-rep_000000000001' };

describe('sync settings (§8.3, §8.6, §8.10)', () => {
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

describe('pull endpoint parameters (§7.3)', () => {
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

describe('remote records (§8.4)', () => {
  it('names the first missing required field of an event, and keeps the rest verbatim', () => {
    for (const field of Object.keys(event)) {
      expect(() => remoteEvent({ ...event, [field]: '' })).toThrow(`remote event is missing required field '${field}'`);
    }
    const big = 'x'.repeat(300_000);
    const logs = capturedLogger();
    const stored = remoteEvent({ ...event, body: big, metadata: { b: 1, a: [2] }, topic: ' lane ', artifact_ids: ['art_2', 'art_1', 'art_2'] }, logs.log);
    expect(stored).toMatchObject({ body: big, metadata_json: '{"a": [2], "b": 1}', topic: 'lane', artifact_ids: ['art_2', 'art_1'], origin_seq: 3 });
    expect(logs.records[0]).toMatchObject({ level: 40, msg: expect.stringContaining('exceeds the local body or metadata limit; stored as received') });
  });

  it('verifies an artifact’s hash and recomputes its size', () => {
    const artifact = { id: 'art_1', kind: 'note', sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824', content: 'hello', created_by: 'a', created_at: '2026-01-01T00:00:00Z', size_bytes: 99 };
    expect(remoteArtifact(artifact)).toMatchObject({ size_bytes: 5, origin_replica: null, metadata_json: '{}' });
    expect(() => remoteArtifact({ ...artifact, content: 'hellO' })).toThrow(/^remote artifact 'art_1' failed hash verification \(claimed 2cf24dba5fb0a30e\.\.\., computed [0-9a-f]{16}\.\.\.\)$/);
    expect(() => remoteArtifact({ ...artifact, created_by: undefined })).toThrow("remote artifact is missing required field 'created_by'");
  });
});

describe('sync loop helpers', () => {
  it('backs off exponentially from one interval, capped at 16 intervals and 5 minutes', () => {
    expect([1, 2, 3, 4, 5, 9].map((n) => backoffMs(15_000, n))).toEqual([15_000, 30_000, 60_000, 120_000, 240_000, 240_000]);
    expect(backoffMs(60_000, 9)).toBe(MAX_BACKOFF_MS);
  });

  it('merges profiles last-writer-wins by advertised_at, never over self, ignoring junk', () => {
    const known: Record<string, Record<string, unknown>> = { rep_b: { advertised_at: '2026-01-01T00:00:05Z', v: 1 } };
    mergeProfiles(known, { rep_b: { advertised_at: '2026-01-01T00:00:05Z', v: 2 }, rep_c: { advertised_at: '2026-01-01T00:00:01Z' }, rep_self: { advertised_at: '2099-01-01T00:00:00Z' }, rep_d: 'junk' }, 'rep_self');
    expect(known).toEqual({ rep_b: { advertised_at: '2026-01-01T00:00:05Z', v: 1 }, rep_c: { advertised_at: '2026-01-01T00:00:01Z' } });
    mergeProfiles(known, { rep_b: { advertised_at: '2026-01-01T00:00:06Z', v: 3 } }, 'rep_self');
    expect(known.rep_b?.v).toBe(3);
  });

  it('removes user-info from peer urls in messages', () => {
    expect(peerLabel('https://user:pw@desktop.example.com/')).toBe('https://desktop.example.com');
    expect(peerLabel('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
  });
});
