/**
 * The RegisteredSources contract, written once and run against every adapter: sources added,
 * listed in id order, replaced and removed, and their latest refresh, which survives a
 * re-registration and is refused for a source that is not registered. Each test gets a fresh store.
 */
import { describe, expect, it } from 'vitest';
import type { RegisteredSource, RegisteredSources } from '../../stores/ports/registered-sources.js';
import { openForEachTest } from '../helpers/each-test.js';

export interface OpenedRegisteredSources {
  sources: RegisteredSources;
  cleanup(): Promise<void>;
}

function registered(id: string, overrides: Partial<RegisteredSource> = {}): RegisteredSource {
  return {
    source_id: id,
    kind: 'git',
    location: 'git@github.com:Team/Repo.git',
    match_key: 'github.com/team/repo',
    ref: 'main',
    wing: 'repo',
    mode: 'projects',
    added_by: 'alice',
    added_at: '2026-03-01T10:00:00.000Z',
    ...overrides,
  };
}

export function describeRegisteredSourcesContract(adapterName: string, open: () => Promise<OpenedRegisteredSources>): void {
  describe(`RegisteredSources contract — ${adapterName}`, () => {
    let sources: RegisteredSources;
    openForEachTest(open, (opened) => (sources = opened.sources));

    it('adds, lists in id order, replaces, and removes sources', async () => {
      expect(await sources.list()).toEqual([]);
      const b = registered('src_b');
      const a = registered('src_a', { kind: 'dir', location: '/data/ünï', match_key: undefined, ref: undefined, wing: undefined });
      await sources.put(b);
      await sources.put(a);
      expect(await sources.get('src_b')).toEqual(b);
      expect((await sources.list()).map((s) => s.source_id)).toEqual(['src_a', 'src_b']);
      await sources.put({ ...b, mode: 'convos' });
      expect((await sources.get('src_b'))?.mode).toBe('convos');
      expect(await sources.remove('src_b')).toBe(true);
      expect(await sources.remove('src_b')).toBe(false);
      expect(await sources.get('src_b')).toBeUndefined();
      expect((await sources.list()).map((s) => s.source_id)).toEqual(['src_a']);
    });

    it('keeps who first added a source and when through every replacement, the rest being the new record', async () => {
      await sources.put(registered('src_a', { kind: 'dir', location: '/data/ünï', match_key: undefined, ref: undefined }));
      await sources.put(registered('src_a', { added_by: 'bob', added_at: '2026-03-05T00:00:00.000Z', mode: 'convos', wing: 'wïng/ü "q"' }));
      await sources.put(registered('src_a', { added_by: 'carol', added_at: '2026-03-06T00:00:00.000Z', mode: 'convos', wing: 'wïng/ü "q"' }));
      expect(await sources.get('src_a')).toEqual(registered('src_a', { mode: 'convos', wing: 'wïng/ü "q"' }));
    });

    it('keeps who replaced a source and when verbatim, and drops them when the replacing record has none', async () => {
      await sources.put(registered('src_a'));
      const refresh = { trigger: 'manual' as const, requested_at: '2026-03-01T10:01:00.000Z', state: 'waiting' as const };
      await sources.setRefresh('src_a', refresh);
      const replaced = registered('src_a', { mode: 'convos', updated_by: 'bob', updated_at: '2026-03-02T09:00:00.000Z' });
      await sources.put(replaced);
      expect(await sources.get('src_a')).toEqual({ ...replaced, last_refresh: refresh });
      expect(await sources.list()).toEqual([{ ...replaced, last_refresh: refresh }]);
      await sources.put(registered('src_a', { updated_at: '2026-03-03T09:00:00.000Z' }));
      const unknownChanger = await sources.get('src_a');
      expect(unknownChanger).toMatchObject({ added_by: 'alice', updated_at: '2026-03-03T09:00:00.000Z', mode: 'projects' });
      expect(unknownChanger).not.toHaveProperty('updated_by');
    });

    it('records the latest refresh, keeps it when the source is registered again, and refuses one for an unknown source', async () => {
      await sources.put(registered('src_a'));
      const refresh = { trigger: 'webhook' as const, requested_at: '2026-03-01T10:01:00.000Z', job_id: 'job_1', state: 'completed' as const, commit: 'abc123',
        drawers_written: 7 };
      expect(await sources.setRefresh('src_a', refresh)).toBe(true);
      expect((await sources.get('src_a'))?.last_refresh).toEqual(refresh);
      await sources.put(registered('src_a', { wing: 'renamed' }));
      expect(await sources.get('src_a')).toEqual(registered('src_a', { wing: 'renamed', last_refresh: refresh }));
      expect((await sources.list())[0]?.last_refresh).toEqual(refresh);
      expect(await sources.setRefresh('src_missing', refresh)).toBe(false);
      expect(await sources.get('src_missing')).toBeUndefined();
      await sources.remove('src_a');
      await sources.put(registered('src_a'));
      expect((await sources.get('src_a'))?.last_refresh).toBeUndefined();
    });
  });
}
