/**
 * A cluster palace written before the vector-storage change (drawer mapping version 1: vectors
 * kept as JSON in `_source`, a scripted term-frequency field beside the token field) moved to the
 * current mapping by `repair` (the alias swap of drawer-mapping.ts `reindexTo`), its HNSW graph
 * rebuilt with this build's parameters (m 16 then, 32 now): every drawer
 * comes back with its content, metadata and vector bit for bit, searches work, the copy keeps
 * its vectors once, and re-embedding and a second repair still read and write every vector.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DrawerWrite } from '../../core/drawer.js';
import type { OpenSearchConnection } from '../../stores/opensearch/connection.js';
import { toDocument } from '../../stores/opensearch/drawer-documents.js';
import { aliasName, aliasTarget, DRAWER_MAPPING_VERSION, drawerIndexLayout, KNN_EF_CONSTRUCTION, KNN_M,
  versionedName } from '../../stores/opensearch/drawer-mapping.js';
import { OpenSearchDrawerIndex } from '../../stores/opensearch/opensearch-drawer-index.js';
import { openSearchIndexMaintenance } from '../../stores/opensearch/reindex-repair.js';
import { drawer, randomUnitVector, seededRandom } from '../contract/drawer-index.fixtures.js';
import { inThrowawayOpenSearchPalace } from '../helpers/opensearch-palace.js';

const DIMENSION = 384;
const ROWS = 300;

/**
 * The drawers index body of mapping version 1, as the 2.19 adapter created it (vectors in
 * `_source`), frozen as data; on 3.x its `index.knn.derived_source.enabled: false` keeps the
 * vectors in `_source`, as 2.19 (which had no derived source) did.
 */
const VERSION_ONE_FILE = path.join(import.meta.dirname, '..', 'fixtures', 'opensearch', 'drawer-mapping-v1.json');
const VERSION_ONE_BODY = JSON.parse(readFileSync(VERSION_ONE_FILE, 'utf8')) as Record<string, unknown>;

async function storeBytesPerDocument(conn: OpenSearchConnection, index: string): Promise<number> {
  await conn.client.indices.forcemerge({ index, max_num_segments: 1 });
  await conn.client.indices.flush({ index, force: true });
  const res = await conn.client.cat.segments({ index, format: 'json', bytes: 'b' });
  const segments = (res.body as { 'docs.count': string; size: string; searchable: string }[]).filter((s) => s.searchable === 'true');
  const bytes = segments.reduce((sum, s) => sum + Number(s.size), 0);
  const docs = segments.reduce((sum, s) => sum + Number(s['docs.count']), 0);
  return bytes / docs;
}

describe('OpenSearch drawer mapping migration by repair', () => {
  it('moves a version-1 index (vectors in _source) to the current mapping with every drawer and vector intact',
    () =>
      inThrowawayOpenSearchPalace('migrate-v1', async ({ url, palaceName, conn }) => {
        const options = { url, palaceName };
        const rnd = seededRandom(31);
        const rows: DrawerWrite[] = Array.from({ length: ROWS }, (_, i) =>
          drawer(`mv${String(i).padStart(3, '0')}`, `migrated row ${i} harbour${i % 9} lighthouse`, randomUnitVector(rnd, DIMENSION), {
            wing: i % 2 ? 'odd' : 'even',
            room: `room_${i % 4}`,
            custom_flag: i % 3 === 0,
          }));
        const v1 = versionedName(conn, 'drawers', 1);
        await conn.client.indices.create({ index: v1,
          body: { ...VERSION_ONE_BODY, aliases: { [aliasName(conn, 'drawers')]: { is_write_index: true } } } as never });
        await conn.client.indices.create({
          index: versionedName(conn, 'file-states', 1),
          body: {
            settings: { number_of_shards: 1, number_of_replicas: 0 },
            mappings: { dynamic: 'strict',
              properties: { wing: { type: 'keyword' }, source_file: { type: 'keyword' }, state: { type: 'object', enabled: false } } },
            aliases: { [aliasName(conn, 'file-states')]: { is_write_index: true } },
          } as never,
        });
        const body = rows.flatMap((d) => [{ index: { _id: d.id } }, toDocument(d)]);
        const written = await conn.client.bulk({ index: v1, body, refresh: 'true' });
        expect((written.body as { errors: boolean }).errors).toBe(false);
        const oldBytes = await storeBytesPerDocument(conn, v1);

        const maintenance = openSearchIndexMaintenance(options);
        const checked = await maintenance.check();
        expect(checked.findings).toEqual(expect.arrayContaining([
          { part: 'opensearch:drawers', problem: `mapping version 1 is older than this build's ${DRAWER_MAPPING_VERSION}` },
          { part: 'opensearch:drawers', problem: 'vectors are stored a second time as JSON in _source' },
          { part: 'opensearch:drawers', problem: `HNSW parameters m 16 / ef_construction 128 differ from this build's ${KNN_M} / ${KNN_EF_CONSTRUCTION}` },
        ]));
        const rebuilt = await maintenance.rebuild();
        expect(rebuilt).toMatchObject({ drawers: { from: v1, to: versionedName(conn, 'drawers', 2), copied: ROWS, documents_after: ROWS } });
        expect((await maintenance.check()).findings).toEqual([]);
        await maintenance.close();

        const v2 = versionedName(conn, 'drawers', 2);
        expect(await aliasTarget(conn, aliasName(conn, 'drawers'))).toBe(v2);
        expect(await drawerIndexLayout(conn, v2)).toEqual({ mappingVersion: DRAWER_MAPPING_VERSION, vectorsInSource: false, shards: 1, replicas: 0 });
        const mapping = (await conn.client.indices.getMapping({ index: v2 })).body as Record<string,
          { mappings: { properties: { embedding: { method: { parameters: Record<string, number> } } } } }>;
        expect(mapping[v2]!.mappings.properties.embedding.method.parameters).toEqual({ m: KNN_M, ef_construction: KNN_EF_CONSTRUCTION });
        const newBytes = await storeBytesPerDocument(conn, v2);
        // The JSON copy of each vector (~6 KB of doubles) is gone; the flat vector (1.5 KB) stays.
        expect(newBytes).toBeLessThan(oldBytes / 3);

        const index = await OpenSearchDrawerIndex.open(options);
        try {
          // Every row, content, metadata and vector, exactly, through the bulk scan (export, migrate).
          const scanned: DrawerWrite[] = [];
          for (let after: string | undefined;;) {
            const page = await index.scanRows(after, 70);
            scanned.push(...page);
            if (page.length < 70) break;
            after = page[page.length - 1]!.id;
          }
          expect(scanned.map((d) => d.id)).toEqual(rows.map((d) => d.id));
          for (const [i, d] of scanned.entries()) {
            expect(d.content).toBe(rows[i]!.content);
            expect(d.meta).toEqual(rows[i]!.meta);
            expect(d.embedding).toEqual(rows[i]!.embedding);
          }
          // Point reads of vectors (the exact re-sort, dedupe) and the searches.
          const vectors = await index.embeddings(rows.map((d) => d.id));
          expect(rows.every((d) => vectors.get(d.id)!.every((x, j) => x === d.embedding[j]))).toBe(true);
          expect((await index.knn(rows[42]!.embedding, 3))[0]).toMatchObject({ drawer: { id: 'mv042' }, distance: expect.closeTo(0, 6) });
          expect((await index.lexical(['harbour4'], 100)).map((d) => d.id).sort()).toEqual(rows.filter((_, i) => i % 9 === 4).map((d) => d.id));
          expect(await index.count({ meta: { custom_flag: true } })).toBe(ROWS / 3);

          // Re-embedding rewrites vectors through partial updates; the derived source carries the rest.
          const fresh = new Map(rows.slice(0, 10).map((d) => [d.id, randomUnitVector(rnd, DIMENSION)]));
          expect(await index.replaceEmbeddings(fresh)).toBe(10);
          const reread = await index.embeddings([...fresh.keys()]);
          for (const [id, v] of fresh) expect(reread.get(id)).toEqual(v);
          expect((await index.get(['mv003']))[0]).toEqual({ id: 'mv003', content: rows[3]!.content, meta: rows[3]!.meta });

          // A repair of a derived-source index copies the vectors it reconstructs, bit for bit.
          const again = openSearchIndexMaintenance(options);
          expect(await again.rebuild()).toMatchObject({ drawers: { to: versionedName(conn, 'drawers', 3), copied: ROWS } });
          await again.close();
          const after = await index.embeddings(rows.map((d) => d.id));
          expect(rows.every((d) => after.get(d.id)!.every((x, j) => x === (fresh.get(d.id) ?? d.embedding)[j]))).toBe(true);
        } finally {
          await index.close();
        }
      }), 120_000);
});
