/**
 * The DrawerIndex contract run against the OpenSearch adapter (the local stack's node at
 * OPENSEARCH_URL), plus what only this adapter has: the alias in front of versioned indices and
 * `reindexTo`. Every store gets its own palace prefix and its indices are deleted afterwards.
 * No skip when OpenSearch is down: opening fails with store_unavailable and every test fails.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import { OpenSearchConnection } from '../../stores/opensearch/connection.js';
import { aliasName, aliasTarget, dropPalaceIndices, reindexTo, versionedName } from '../../stores/opensearch/drawer-mapping.js';
import { OpenSearchDrawerIndex } from '../../stores/opensearch/opensearch-drawer-index.js';
import type { DrawerIndex } from '../../stores/ports.js';
import { describeDrawerIndexContract } from './drawer-index.contract.js';
import { drawer, filedAt, randomUnitVector, seededRandom } from './drawer-index.fixtures.js';

function freshPalace(): { palaceName: string; open: () => Promise<OpenSearchDrawerIndex>; cleanup: () => Promise<void> } {
  const palaceName = `contract-di-${randomBytes(5).toString('hex')}`;
  const options = { url: loadConfig().opensearch.url, palaceName };
  const handles: DrawerIndex[] = [];
  return {
    palaceName,
    open: async () => {
      const index = await OpenSearchDrawerIndex.open(options);
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

describeDrawerIndexContract('cluster (OpenSearch)', async () => {
  const palace = freshPalace();
  return { index: await palace.open(), reopen: palace.open, cleanup: palace.cleanup };
});

describe('OpenSearchDrawerIndex specifics', () => {
  it('serves reads and writes through the alias across reindexTo, with nothing lost', async () => {
    const palace = freshPalace();
    try {
      const index = await palace.open();
      const conn = index.connection;
      const rnd = seededRandom(21);
      const rows = Array.from({ length: 120 }, (_, i) =>
        drawer(`rx${i}`, `reindex row ${i} token${i % 7}`, randomUnitVector(rnd, index.dimension), { wing: i % 2 ? 'odd' : 'even', filed_at: filedAt(i), custom_flag: i % 3 === 0 }),
      );
      await index.upsert(rows);
      await index.replaceFile('odd', '/f.md', [drawer('rx_file', 'file row', randomUnitVector(rnd, index.dimension), { wing: 'odd', source_file: '/f.md' })], {
        wing: 'odd', source_file: '/f.md', size: 1, mtime_ms: 2, content_sha256: 'cd'.repeat(32), drawer_count: 1, mined_at: filedAt(1), extra: { commit: 'abc' },
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
    } finally {
      await palace.cleanup();
    }
  });

  it('refuses to open a palace with another dimension, naming the field', async () => {
    const palace = freshPalace();
    try {
      await palace.open();
      const err = await OpenSearchDrawerIndex.open({ url: loadConfig().opensearch.url, palaceName: palace.palaceName, dimension: 512 }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'invalid_argument', field: 'dimension', rule: 'matches_palace' });
    } finally {
      await palace.cleanup();
    }
  });

  it('fails with a retryable store_unavailable error naming opensearch when nothing listens', async () => {
    const err = await OpenSearchDrawerIndex.open({ url: 'http://127.0.0.1:9', palaceName: 'nowhere', attempts: 2 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'store_unavailable', store: 'opensearch', retryable: true });
  });
});
