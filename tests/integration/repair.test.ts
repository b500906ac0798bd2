/**
 * `repair` on both profiles. Embedded: a palace whose ANN graph file was deleted and one of
 * whose FTS rows was dropped is reported by `--check` without anything changing on disk, then
 * rebuilt, after which the check is clean and the dropped drawer is found lexically again.
 * Cluster: the OpenSearch index behind the alias is copied into a fresh one, the alias swapped,
 * every document kept and searches unchanged.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import type { Config } from '../../core/config.js';
import { repairIndexes } from '../../palace/backup/repair.js';
import { DRAWER_ANN_FILE, DRAWER_DB_FILE } from '../../stores/embedded/drawers/drawer-db.js';
import { openSqliteDrawerIndex } from '../../stores/embedded/drawers/sqlite-drawer-index.js';
import { openIndexMaintenance, openStores } from '../../stores/open.js';
import { OpenSearchConnection } from '../../stores/opensearch/connection.js';
import { aliasName, aliasTarget, versionedName } from '../../stores/opensearch/drawer-mapping.js';
import { clusterConfig, dropClusterPalace } from '../helpers/cluster-palace.js';
import { drawer, randomUnitVector, seededRandom } from '../contract/drawer-index.fixtures.js';

let tmp: string;
const rows = (() => {
  const rnd = seededRandom(7);
  return Array.from({ length: 60 },
    (_, i) =>
      drawer(`rp${String(i).padStart(2, '0')}`, `repair row ${i} harbour${i % 5} uniqueword${i}`, randomUnitVector(rnd, 384), {
        wing: i % 2 ? 'odd' : 'even',
      }));
})();

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mempalace-repair-'));
});

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('repair, embedded', () => {
  it('finds a deleted ANN file and a dropped FTS row with --check, changes nothing, then fixes both', async () => {
    const dir = path.join(tmp, 'palace');
    const index = await openSqliteDrawerIndex(dir);
    await index.upsert(rows);
    await index.close();
    const maintenance = openIndexMaintenance(loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: dir }));
    expect((await maintenance.check()).findings).toEqual([]);

    fs.rmSync(path.join(dir, DRAWER_ANN_FILE));
    const db = new Database(path.join(dir, DRAWER_DB_FILE));
    const seq = db.prepare('SELECT seq FROM drawers WHERE id = ?').pluck().get('rp17') as number;
    db.prepare('DELETE FROM drawer_fts WHERE rowid = ?').run(seq);
    db.close();

    const checked = await repairIndexes(maintenance, { checkOnly: true });
    expect(checked.checked_only).toBe(true);
    expect(checked.before.findings).toEqual([
      { part: 'fts', problem: 'drawers without a lexical (FTS) row', count: 1, sample: ['rp17'] },
      { part: 'ann', problem: 'graph file missing' },
    ]);
    expect(fs.existsSync(path.join(dir, DRAWER_ANN_FILE))).toBe(false);
    expect((await maintenance.check()).findings).toHaveLength(2);

    const repaired = await repairIndexes(maintenance, { checkOnly: false });
    expect(repaired.rebuilt).toMatchObject({ fts_rows: 60, ann_labels: 60 });
    expect(repaired.after?.findings).toEqual([]);
    expect(fs.existsSync(path.join(dir, DRAWER_ANN_FILE))).toBe(true);

    const reopened = await openSqliteDrawerIndex(dir);
    try {
      expect(reopened.annStatus.outcome).toBe('loaded');
      expect((await reopened.lexical(['uniqueword17'], 5)).map((d) => d.id)).toEqual(['rp17']);
      expect((await reopened.knn(rows[17]!.embedding, 1))[0]!.drawer.id).toBe('rp17');
    } finally {
      await reopened.close();
    }
  });

  it('reports a palace with no database as empty, creating nothing', async () => {
    const dir = path.join(tmp, 'absent');
    const maintenance = openIndexMaintenance(loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: dir }));
    expect((await maintenance.check()).findings).toEqual([]);
    expect(fs.existsSync(dir)).toBe(false);
  });
});

describe('repair, cluster', () => {
  let config: Config;
  beforeAll(() => {
    config = clusterConfig('repair');
  });
  afterAll(async () => {
    if (config) await dropClusterPalace(config);
  });

  it('reindexes into a fresh index and swaps the alias, keeping every document and search result', async () => {
    const stores = await openStores(config);
    try {
      await stores.drawers.upsert(rows);
      await stores.drawers.putFileStates([{ wing: 'odd', source_file: '/a.md', size: 1, mtime_ms: 2, content_sha256: 'ab'.repeat(32), drawer_count: 1,
        mined_at: '2026-01-01T00:00:00.000000Z' }]);
      const before = { knn: await stores.drawers.knn(rows[3]!.embedding, 5), lexical: await stores.drawers.lexical(['harbour2'], 20),
        count: await stores.drawers.count() };
      const maintenance = openIndexMaintenance(config);
      try {
        const checked = await repairIndexes(maintenance, { checkOnly: true });
        expect(checked.before.findings).toEqual([]);
        expect(checked.before.facts).toMatchObject({ drawers: { documents: 60 }, 'file-states': { documents: 1 } });
        const report = await repairIndexes(maintenance, { checkOnly: false });
        const conn = new OpenSearchConnection({ url: config.opensearch.url, palaceName: config.palaceName });
        try {
          expect(report.rebuilt).toMatchObject({
            drawers: { from: versionedName(conn, 'drawers', 1), to: versionedName(conn, 'drawers', 2), copied: 60, documents_before: 60, documents_after: 60 },
            'file-states': { copied: 1, documents_after: 1 },
          });
          expect(await aliasTarget(conn, aliasName(conn, 'drawers'))).toBe(versionedName(conn, 'drawers', 2));
        } finally {
          await conn.close();
        }
        expect(report.after?.findings).toEqual([]);
      } finally {
        await maintenance.close();
      }
      expect(await stores.drawers.knn(rows[3]!.embedding, 5)).toEqual(before.knn);
      expect(await stores.drawers.lexical(['harbour2'], 20)).toEqual(before.lexical);
      expect(await stores.drawers.count()).toBe(before.count);
    } finally {
      await stores.close();
    }
  });
});
