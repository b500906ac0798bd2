/**
 * The DrawerIndex contract run against the OpenSearch adapter (the local stack's node at
 * OPENSEARCH_URL), plus what only this adapter has: the alias in front of versioned indices and
 * `reindexTo`. Every store gets its own palace prefix and its indices are deleted afterwards.
 * No skip when OpenSearch is down: opening fails with store_unavailable and every test fails.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import { OpenSearchConnection } from '../../stores/opensearch/connection.js';
import { aliasName, aliasTarget, dropPalaceIndices, reindexTo, versionedName, withBulkLoadSettings } from '../../stores/opensearch/drawer-mapping.js';
import type { OpenSearchDrawerIndexOptions } from '../../stores/opensearch/drawer-indices.js';
import { OpenSearchDrawerIndex } from '../../stores/opensearch/opensearch-drawer-index.js';
import type { DrawerWrite } from '../../core/drawer.js';
import type { DrawerFilter, DrawerIndex } from '../../stores/ports/drawers/drawer-index.js';
import { describeDrawerIndexContract } from './drawer-index.contract.js';
import { codePointCompare, drawer, filedAt, randomUnitVector, seededRandom } from './drawer-index.fixtures.js';

interface FreshPalace {
  palaceName: string;
  /** Opens the palace's index (with `overrides` of the options); cleanup closes it. */
  open: (overrides?: Partial<OpenSearchDrawerIndexOptions>) => Promise<OpenSearchDrawerIndex>;
  cleanup: () => Promise<void>;
}

function freshPalace(): FreshPalace {
  const palaceName = `contract-di-${randomBytes(5).toString('hex')}`;
  const options = { url: loadConfig().opensearch.url, palaceName };
  const handles: DrawerIndex[] = [];
  return {
    palaceName,
    open: async (overrides = {}) => {
      const index = await OpenSearchDrawerIndex.open({ ...options, ...overrides });
      handles.push(index);
      return index;
    },
    cleanup: async () => {
      for (const h of handles) await h.close();
      const admin = new OpenSearchConnection(options);
      await dropPalaceIndices(admin);
      await admin.close();
    },
  };
}

/** A test's own palace, its indices dropped whatever the body does. */
async function withFreshPalace(body: (palace: FreshPalace) => Promise<void>): Promise<void> {
  const palace = freshPalace();
  try {
    await body(palace);
  } finally {
    await palace.cleanup();
  }
}

describeDrawerIndexContract('cluster (OpenSearch)', async () => {
  const palace = freshPalace();
  return { index: await palace.open(), reopen: () => palace.open(), cleanup: palace.cleanup };
});

describe('OpenSearchDrawerIndex specifics', () => {
  it('serves reads and writes through the alias across reindexTo, with nothing lost', async () =>
    withFreshPalace(async (palace) => {
      const index = await palace.open();
      const conn = index.connection;
      const rnd = seededRandom(21);
      const rows = Array.from({ length: 120 }, (_, i) =>
        drawer(`rx${i}`, `reindex row ${i} token${i % 7}`, randomUnitVector(rnd, index.dimension), { wing: i % 2 ? 'odd' : 'even', filed_at: filedAt(i),
          custom_flag: i % 3 === 0 }));
      await index.upsert(rows);
      await index.replaceFile('odd', '/f.md', [drawer('rx_file', 'file row', randomUnitVector(rnd, index.dimension), { wing: 'odd', source_file: '/f.md' })], {
        wing: 'odd',
        source_file: '/f.md',
        size: 1,
        mtime_ms: 2,
        content_sha256: 'cd'.repeat(32),
        drawer_count: 1,
        mined_at: filedAt(1),
        extra: { commit: 'abc' },
      });
      const alias = aliasName(conn, 'drawers');
      expect(await aliasTarget(conn, alias)).toBe(versionedName(conn, 'drawers', 1));
      const before = {
        knn: await index.knn(rows[5]!.embedding, 7, { wing: 'odd' }),
        lexical: (await index.lexical(['token3'], 50)).map((d) => d.id),
        list: await index.list({}, 0, 200),
        taxonomy: await index.taxonomy(),
        states: await index.fileStates('odd', ['/f.md']),
        meta: await index.count({ meta: { custom_flag: true } }),
      };

      const moved = await reindexTo(conn, 'drawers', 2, index.dimension);
      expect(moved).toEqual({ from: versionedName(conn, 'drawers', 1), to: versionedName(conn, 'drawers', 2), copied: 121 });
      const movedStates = await reindexTo(conn, 'file-states', 2, index.dimension);
      expect(movedStates.copied).toBe(1);
      expect(await aliasTarget(conn, alias)).toBe(versionedName(conn, 'drawers', 2));
      const copySettings = await conn.client.indices.getSettings({ index: versionedName(conn, 'drawers', 2), flat_settings: true });
      expect(Object.keys(Object.values(copySettings.body as Record<string, { settings: object }>)[0]!.settings)).not.toContain('index.refresh_interval');
      const old = await conn.client.indices.exists({ index: versionedName(conn, 'drawers', 1) });
      expect(old.body).toBe(false);

      // The same instance keeps working: it only ever names the alias.
      expect(await index.knn(rows[5]!.embedding, 7, { wing: 'odd' })).toEqual(before.knn);
      expect((await index.lexical(['token3'], 50)).map((d) => d.id)).toEqual(before.lexical);
      expect(await index.list({}, 0, 200)).toEqual(before.list);
      expect(await index.taxonomy()).toEqual(before.taxonomy);
      expect(await index.fileStates('odd', ['/f.md'])).toEqual(before.states);
      expect(await index.count({ meta: { custom_flag: true } })).toBe(before.meta);
      expect((await index.embeddings(['rx9'])).get('rx9')).toEqual(rows[9]!.embedding);
      await index.upsert([drawer('rx_new', 'written after the swap', randomUnitVector(rnd, index.dimension))]);
      expect(await index.count()).toBe(122);
      expect(await reindexTo(conn, 'drawers', 2, index.dimension)).toMatchObject({ copied: 0 });
    }));

  it('loads with refresh off and an async translog, then restores both and shows the load, even when it fails', async () =>
    withFreshPalace(async (palace) => {
      const index = await palace.open({ dimension: 4, refresh: false });
      const conn = index.connection;
      const target = versionedName(conn, 'drawers', 1);
      const settings = async () => {
        const res = await conn.client.indices.getSettings({ index: target, flat_settings: true });
        const flat = (res.body as Record<string, { settings: Record<string, string> }>)[target]!.settings;
        return { refresh: flat['index.refresh_interval'], translog: flat['index.translog.durability'] };
      };
      const rnd = seededRandom(23);
      const rows = Array.from({ length: 30 }, (_, i) => drawer(`bl${i}`, `bulk row ${i}`, randomUnitVector(rnd, 4)));
      const during = await withBulkLoadSettings(conn, target, async () => {
        await index.upsert(rows.slice(0, 20));
        return settings();
      });
      expect(during).toEqual({ refresh: '-1', translog: 'async' });
      expect(await settings()).toEqual({ refresh: undefined, translog: undefined });
      expect(await index.count()).toBe(20);

      const failure = await withBulkLoadSettings(conn, target, async () => {
        await index.upsert(rows.slice(20));
        throw new Error('load interrupted');
      }).catch((e: unknown) => e);
      expect(failure).toMatchObject({ message: 'load interrupted' });
      expect(await settings()).toEqual({ refresh: undefined, translog: undefined });
      expect(await index.count()).toBe(30);
    }));

  it('pages logical drawers exactly past the engine’s 10 000-bucket and 10 000-hit windows', async () =>
    withFreshPalace(async (palace) => {
      const index = await palace.open({ dimension: 4, refresh: false });
      const rnd = seededRandom(22);
      // 10 060 groups: singles, plus every 50th group a logical drawer of three chunk rows.
      const rows: DrawerWrite[] = [];
      for (let g = 0; g < 10_060; g++) {
        const id = `deep_${String((g * 7919) % 10_060).padStart(5, '0')}`;
        const wing = g % 2 ? 'a' : 'b';
        if (g % 50 === 0) {
          for (const c of [2, 0, 1])
            rows.push(drawer(`${id}_c${c}`, `chunk ${c}`, randomUnitVector(rnd, 4), { parent_drawer_id: id, chunk_index: c, wing: c === 1 ? 'c' : wing }));
        } else {
          rows.push(drawer(id, `deep ${g}`, randomUnitVector(rnd, 4), { filed_at: filedAt(g % 13), wing }));
        }
      }
      for (let i = 0; i < rows.length; i += 1000) await index.upsert(rows.slice(i, i + 1000));
      await index.refresh();
      const logical = (d: DrawerWrite) => d.meta.parent_drawer_id ?? d.id;
      const rowOrder = (a: DrawerWrite, b: DrawerWrite) =>
        codePointCompare(logical(a), logical(b)) || a.meta.chunk_index - b.meta.chunk_index || codePointCompare(a.id, b.id);
      const expectPage = async (filter: DrawerFilter, keep: (d: DrawerWrite) => boolean, offset: number, limit: number) => {
        const groups = [...new Set(rows.filter(keep).map(logical))].sort(codePointCompare);
        const chosen = new Set(groups.slice(offset, offset + limit));
        const page = await index.list(filter, offset, limit);
        expect(page.total).toBe(groups.length);
        expect(page.items.map((d) => d.id)).toEqual(rows.filter((r) => chosen.has(logical(r))).sort(rowOrder).map((r) => r.id));
      };
      await expectPage({}, () => true, 9_990, 40);
      await expectPage({}, () => true, 10_050, 100);
      await expectPage({}, () => true, 0, 10_000);
      // A group matches when any row does and comes back whole (its chunk in wing c included).
      await expectPage({ wing: 'b' }, (d) => d.meta.wing === 'b', 2_000, 3_000);
      await expectPage({ wing: 'c' }, (d) => d.meta.wing === 'c', 0, 500);
      expect(await index.list({}, 10_060, 10)).toEqual({ items: [], total: 10_060 });
    }));

  it('refuses to open a palace with another dimension, naming the field', async () =>
    withFreshPalace(async (palace) => {
      await palace.open();
      const err = await palace.open({ dimension: 512 }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'invalid_argument', field: 'dimension', rule: 'matches_palace' });
    }));

  it('fails with a retryable store_unavailable error naming opensearch when nothing listens', async () => {
    const err = await OpenSearchDrawerIndex.open({ url: 'http://127.0.0.1:9', palaceName: 'nowhere', attempts: 2 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'store_unavailable', store: 'opensearch', retryable: true });
  });
});
