/**
 * The JobStore contract, written once and run against every adapter: job records and their
 * running index, progress events, manifests (written page by page, 100 000 entries, replaced only
 * once whole), blobs, and dropping a finished job's manifests and blobs by prefix. Each test
 * gets a fresh store.
 */
import { describe, expect, it } from 'vitest';
import type { JobRecord, JobStore, ManifestEntry } from '../../stores/ports/job-store.js';
import { openForEachTest } from '../helpers/each-test.js';

/** The contract stores arbitrary JSON objects as specs and progress. */
export type Json = Record<string, unknown>;

export interface OpenedJobStore {
  jobs: JobStore<Json, Json>;
  cleanup(): Promise<void>;
}

function job(id: string, overrides: Partial<JobRecord<Json, Json>> = {}): JobRecord<Json, Json> {
  return {
    job_id: id,
    kind: 'mine',
    lock_key: 'palace/src-a',
    state: 'running',
    spec: { source: '/data/src-a', mode: 'projects', nested: { wing: 'wing_a' } },
    progress: { files_seen: 0 },
    created_at: '2026-03-01T10:00:00.000Z',
    updated_at: '2026-03-01T10:00:00.000Z',
    ...overrides,
  };
}

/** Entries in pages of 1 000, as a scan yields them. */
async function* pagesOf(entries: ManifestEntry[]): AsyncGenerator<ManifestEntry[]> {
  for (let i = 0; i < entries.length; i += 1_000) yield entries.slice(i, i + 1_000);
}

/** Pages of 1 000 entries, then the scan fails after `pages` of them. */
async function* failingAfter(entries: ManifestEntry[], pages: number): AsyncGenerator<ManifestEntry[]> {
  let n = 0;
  for await (const page of pagesOf(entries)) {
    if (n++ === pages) throw new Error('scan died');
    yield page;
  }
  throw new Error('scan died');
}

function manifest(n: number, tag = ''): ManifestEntry[] {
  return Array.from({ length: n }, (_, i) => ({
    relativePath: `dir${i % 37}/fïle-${i}${tag}.md`,
    absolutePath: `/data/src-a/dir${i % 37}/fïle-${i}${tag}.md`,
    size: i * 13 + 1,
    mtimeMs: 1_700_000_000_000 + i,
  }));
}

export function describeJobStoreContract(adapterName: string, open: () => Promise<OpenedJobStore>): void {
  describe(`JobStore contract — ${adapterName}`, () => {
    let jobs: JobStore<Json, Json>;
    openForEachTest(open, (opened) => (jobs = opened.jobs));

    describe('records', () => {
      it('round-trips a record, with and without a cursor', async () => {
        const a = job('job_a');
        const b = job('job_b', { state: 'queued', cursor: { batch: 3, files: ['x'] } });
        await jobs.create(a);
        await jobs.create(b);
        expect(await jobs.get('job_a')).toEqual(a);
        expect('cursor' in (await jobs.get('job_a'))!).toBe(false);
        expect(await jobs.get('job_b')).toEqual(b);
        expect(await jobs.get('job_missing')).toBeUndefined();
      });

      it('refuses a second record with the same id and keeps the first', async () => {
        const a = job('job_a');
        await jobs.create(a);
        await expect(jobs.create(job('job_a', { kind: 'sync', lock_key: 'other' }))).rejects.toThrow();
        expect(await jobs.get('job_a')).toEqual(a);
        expect(await jobs.running('other')).toBeUndefined();
      });

      it('updates state and progress, keeps the cursor unless one is given, and stamps updated_at', async () => {
        await jobs.create(job('job_a', { cursor: { batch: 0 } }));
        const before = Date.now();
        await jobs.update('job_a', 'running', { files_seen: 10 });
        let got = (await jobs.get('job_a'))!;
        expect(got).toMatchObject({ state: 'running', progress: { files_seen: 10 }, cursor: { batch: 0 }, created_at: '2026-03-01T10:00:00.000Z' });
        expect(Date.parse(got.updated_at)).toBeGreaterThanOrEqual(before - 1_000);
        await jobs.update('job_a', 'running', { files_seen: 20 }, { batch: 2 });
        got = (await jobs.get('job_a'))!;
        expect(got.cursor).toEqual({ batch: 2 });
        await jobs.update('job_a', 'succeeded', { files_seen: 30 }, null);
        got = (await jobs.get('job_a'))!;
        expect(got.state).toBe('succeeded');
        expect(got.cursor).toBeNull();
      });

      it('lists newest first by created_at, then job id, up to the limit', async () => {
        await jobs.create(job('job_1', { created_at: '2026-03-01T10:00:00.000Z' }));
        await jobs.create(job('job_3', { created_at: '2026-03-03T10:00:00.000Z' }));
        await jobs.create(job('job_2a', { created_at: '2026-03-02T10:00:00.000Z' }));
        await jobs.create(job('job_2b', { created_at: '2026-03-02T10:00:00.000Z' }));
        expect((await jobs.list(10)).map((j) => j.job_id)).toEqual(['job_3', 'job_2b', 'job_2a', 'job_1']);
        expect((await jobs.list(2)).map((j) => j.job_id)).toEqual(['job_3', 'job_2b']);
        expect((await jobs.list(10))[0]).toEqual(await jobs.get('job_3'));
      });
    });

    describe('running index', () => {
      it('finds the running job of a lock key and forgets it when it leaves the running state', async () => {
        await jobs.create(job('job_a'));
        await jobs.create(job('job_b', { lock_key: 'palace/src-b', state: 'queued' }));
        expect((await jobs.running('palace/src-a'))?.job_id).toBe('job_a');
        expect(await jobs.running('palace/src-b')).toBeUndefined();
        await jobs.update('job_b', 'running', { files_seen: 1 });
        expect((await jobs.running('palace/src-b'))?.job_id).toBe('job_b');
        await jobs.update('job_a', 'failed', { error: 'x' });
        expect(await jobs.running('palace/src-a')).toBeUndefined();
        expect((await jobs.running('palace/src-b'))?.progress).toEqual({ files_seen: 1 });
      });

      it('returns the newest running job when several hold one lock key', async () => {
        await jobs.create(job('job_old', { created_at: '2026-03-01T10:00:00.000Z' }));
        await jobs.create(job('job_new', { created_at: '2026-03-05T10:00:00.000Z' }));
        expect((await jobs.running('palace/src-a'))?.job_id).toBe('job_new');
        await jobs.update('job_new', 'cancelled', {});
        expect((await jobs.running('palace/src-a'))?.job_id).toBe('job_old');
      });
    });

    describe('progress events', () => {
      it('records each update in order with increasing seq, pages by seq, and keeps jobs apart', async () => {
        await jobs.create(job('job_a'));
        await jobs.create(job('job_b', { lock_key: 'k2' }));
        for (let i = 1; i <= 7; i++) {
          await jobs.update('job_a', 'running', { files_seen: i, label: `étape ${i}` });
          if (i % 3 === 0) await jobs.update('job_b', 'running', { other: i });
        }
        const all = await jobs.events('job_a', 0, 100);
        expect(all.map((e) => e.progress.files_seen)).toEqual([1, 2, 3, 4, 5, 6, 7]);
        expect(all[2]!.progress.label).toBe('étape 3');
        for (let i = 1; i < all.length; i++) expect(all[i]!.seq).toBeGreaterThan(all[i - 1]!.seq);
        const page1 = await jobs.events('job_a', 0, 3);
        const page2 = await jobs.events('job_a', page1.at(-1)!.seq, 3);
        const page3 = await jobs.events('job_a', page2.at(-1)!.seq, 3);
        expect([...page1, ...page2, ...page3]).toEqual(all);
        expect(await jobs.events('job_a', all.at(-1)!.seq, 10)).toEqual([]);
        expect((await jobs.events('job_b', 0, 10)).map((e) => e.progress.other)).toEqual([3, 6]);
        expect(await jobs.events('job_none', 0, 10)).toEqual([]);
      });
    });

    describe('manifests', () => {
      it('stores a 20 000-entry manifest and pages through it exactly', async () => {
        const entries = manifest(20_000);
        const started = Date.now();
        expect(await jobs.writeManifest('job_a/manifest', pagesOf(entries))).toBe(20_000);
        const paged: ManifestEntry[] = [];
        for (let offset = 0;; offset += 500) {
          const page = await jobs.readManifest('job_a/manifest', offset, 500);
          if (page.length === 0) break;
          paged.push(...page);
        }
        // Generous bound: 40 page reads plus the write; a per-entry round trip would blow it.
        expect(Date.now() - started).toBeLessThan(20_000);
        expect(paged).toEqual(entries);
        expect(await jobs.readManifest('job_a/manifest', 12_345, 3)).toEqual(entries.slice(12_345, 12_348));
        expect(await jobs.readManifest('job_a/manifest', 19_999, 10)).toEqual([entries[19_999]]);
        expect(await jobs.readManifest('job_a/manifest', 20_000, 10)).toEqual([]);
        expect(await jobs.readManifest('job_missing/manifest', 0, 10)).toEqual([]);
      });

      it('writes a 100 000-entry manifest page by page and reads any page of it', async () => {
        async function* generated(): AsyncGenerator<ManifestEntry[]> {
          for (let p = 0; p < 100; p++) yield manifest(1_000, `-p${p}`).map((e, i) => ({ ...e, size: p * 1_000 + i }));
        }
        expect(await jobs.writeManifest('job_big/manifest', generated())).toBe(100_000);
        const at = async (offset: number) => (await jobs.readManifest('job_big/manifest', offset, 64)).map((e) => e.size);
        expect(await at(0)).toEqual(Array.from({ length: 64 }, (_, i) => i));
        expect(await at(54_321)).toEqual(Array.from({ length: 64 }, (_, i) => 54_321 + i));
        expect(await at(99_990)).toEqual(Array.from({ length: 10 }, (_, i) => 99_990 + i));
      });

      it('a write that fails midway leaves the earlier manifest whole', async () => {
        const old = manifest(30);
        await jobs.writeManifest('m', pagesOf(old));
        await expect(jobs.writeManifest('m', failingAfter(manifest(3_000, '-v2'), 2))).rejects.toThrow('scan died');
        expect(await jobs.readManifest('m', 0, 100)).toEqual(old);
        const fresh = manifest(7, '-v3');
        await jobs.writeManifest('m', pagesOf(fresh));
        expect(await jobs.readManifest('m', 0, 100)).toEqual(fresh);
      });

      it('replaces an earlier manifest under the same id completely', async () => {
        await jobs.writeManifest('m', pagesOf(manifest(50)));
        const shorter = manifest(5, '-v2');
        await jobs.writeManifest('m', pagesOf(shorter));
        expect(await jobs.readManifest('m', 0, 100)).toEqual(shorter);
        expect(await jobs.writeManifest('m', pagesOf([]))).toBe(0);
        expect(await jobs.readManifest('m', 0, 100)).toEqual([]);
      });
    });

    describe('blobs and dropping', () => {
      it('round-trips JSON values, overwrites, and reports a missing key as undefined', async () => {
        const plan = { batches: [[0, 100], [100, 200]], note: 'ünïcødé 🎉', nested: { a: null, b: [true, 1.5] } };
        await jobs.putBlob('job_a/plan', plan);
        expect(await jobs.getBlob('job_a/plan')).toEqual(plan);
        await jobs.putBlob('job_a/plan', [1, 2]);
        expect(await jobs.getBlob('job_a/plan')).toEqual([1, 2]);
        await jobs.putBlob('job_a/count', 0);
        expect(await jobs.getBlob('job_a/count')).toBe(0);
        expect(await jobs.getBlob('job_a/none')).toBeUndefined();
      });

      it('drops the manifests and blobs under a prefix and nothing else', async () => {
        await jobs.create(job('job_1'));
        await jobs.writeManifest('job_1/manifest', pagesOf(manifest(3)));
        await jobs.writeManifest('job_1/manifest-extra', pagesOf(manifest(2)));
        // A write that failed midway leaves nothing under its id.
        await expect(jobs.writeManifest('job_1/manifest-died', failingAfter(manifest(5), 1))).rejects.toThrow('scan died');
        await jobs.writeManifest('job_10/manifest', pagesOf(manifest(4)));
        await jobs.putBlob('job_1/plan', { a: 1 });
        await jobs.putBlob('job_10/plan', { a: 10 });
        await jobs.putBlob('other', { keep: true });
        await jobs.dropArtifacts('job_1/');
        expect(await jobs.readManifest('job_1/manifest', 0, 10)).toEqual([]);
        expect(await jobs.readManifest('job_1/manifest-extra', 0, 10)).toEqual([]);
        expect(await jobs.readManifest('job_1/manifest-died', 0, 10)).toEqual([]);
        expect(await jobs.getBlob('job_1/plan')).toBeUndefined();
        expect(await jobs.readManifest('job_10/manifest', 0, 10)).toHaveLength(4);
        expect(await jobs.getBlob('job_10/plan')).toEqual({ a: 10 });
        expect(await jobs.getBlob('other')).toEqual({ keep: true });
        expect((await jobs.get('job_1'))?.job_id).toBe('job_1');
      });
    });
  });
}
