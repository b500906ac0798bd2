/**
 * The drawers index spread over several shards (MEMPALACE_OPENSEARCH_SHARDS, deploy/README.md
 * "Sizing"): a palace made with one shard is reported by `repair`'s check once the setting asks
 * for three, and `repair` moves it there through the alias swap with every drawer and vector
 * intact; a new palace is created with the configured layout; searches answer from every shard.
 * Replicas are not exercised: one node cannot allocate them.
 */
import { describe, expect, it } from 'vitest';
import type { DrawerWrite } from '../../core/drawer.js';
import { aliasName, aliasTarget, drawerIndexLayout } from '../../stores/opensearch/drawer-mapping.js';
import { OpenSearchDrawerIndex } from '../../stores/opensearch/opensearch-drawer-index.js';
import { openSearchIndexMaintenance } from '../../stores/opensearch/reindex-repair.js';
import { drawer, randomUnitVector, seededRandom } from '../contract/drawer-index.fixtures.js';
import { inThrowawayOpenSearchPalace } from '../helpers/opensearch-palace.js';

const DIMENSION = 384;
const ROWS = 240;

describe('OpenSearch drawers index over several shards', () => {
  it('repair moves a one-shard palace to the configured three, every drawer intact, and searches see every shard',
    () =>
      inThrowawayOpenSearchPalace('shards', async ({ url, palaceName, conn }) => {
        const rnd = seededRandom(7);
        const rows: DrawerWrite[] = Array.from({ length: ROWS },
          (_, i) => drawer(`sh${String(i).padStart(3, '0')}`, `sharded row ${i} beacon${i % 8}`, randomUnitVector(rnd, DIMENSION), { wing: `w${i % 3}` }));
        const single = await OpenSearchDrawerIndex.open({ url, palaceName });
        await single.upsert(rows);
        await single.close();
        const before = (await aliasTarget(conn, aliasName(conn, 'drawers')))!;
        expect(await drawerIndexLayout(conn, before)).toMatchObject({ shards: 1, replicas: 0 });

        const three = { url, palaceName, shards: 3 };
        const maintenance = openSearchIndexMaintenance(three);
        expect((await maintenance.check()).findings).toEqual([{ part: 'opensearch:drawers', problem: '1 shards with 0 replicas; configured: 3 with 0' }]);
        expect(await maintenance.rebuild()).toMatchObject({ drawers: { copied: ROWS, documents_after: ROWS } });
        expect((await maintenance.check()).findings).toEqual([]);
        await maintenance.close();
        const after = (await aliasTarget(conn, aliasName(conn, 'drawers')))!;
        expect(after).not.toBe(before);
        expect(await drawerIndexLayout(conn, after)).toMatchObject({ shards: 3, replicas: 0 });

        const index = await OpenSearchDrawerIndex.open(three);
        try {
          const vectors = await index.embeddings(rows.map((d) => d.id));
          expect(rows.every((d) => vectors.get(d.id)!.every((x, j) => x === d.embedding[j]))).toBe(true);
          expect((await index.get(['sh017']))[0]).toEqual({ id: 'sh017', content: rows[17]!.content, meta: rows[17]!.meta });
          // Each row's own vector finds it first, whichever shard holds it.
          for (const i of [0, 1, 2, 101, 239]) {
            expect((await index.knn(rows[i]!.embedding, 5))[0]).toMatchObject({ drawer: { id: rows[i]!.id }, distance: expect.closeTo(0, 6) });
          }
          expect((await index.knn(rows[5]!.embedding, 5, { wing: 'w2' }))[0]!.drawer.id).toBe('sh005');
          expect((await index.lexical(['beacon3'], 100)).map((d) => d.id).sort()).toEqual(rows.filter((_, i) => i % 8 === 3).map((d) => d.id));
          expect(await index.count()).toBe(ROWS);
          expect(await index.count({ wing: 'w1' })).toBe(ROWS / 3);
        } finally {
          await index.close();
        }
      }), 180_000);

  it('creates a new palace with the configured number of shards', () =>
    inThrowawayOpenSearchPalace('shards-new', async ({ url, palaceName, conn }) => {
      const index = await OpenSearchDrawerIndex.open({ url, palaceName, shards: 2 });
      await index.close();
      expect(await drawerIndexLayout(conn, (await aliasTarget(conn, aliasName(conn, 'drawers')))!)).toMatchObject({ shards: 2, replicas: 0 });
    }), 60_000);
});
