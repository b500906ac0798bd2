/**
 * A leftover import checkpoint never skips records (issue 24, I3). An import is killed with
 * SIGKILL midway (a child process, so only what it committed survives, its checkpoint among
 * it); then the drawers are wiped, or the checkpoint is carried into another palace, and the
 * same file is imported again: the checkpoint no longer describes that palace, so it is ignored
 * and every record is stored; on the cluster profile the drawers' OpenSearch index is dropped.
 * The issue's run had 20,000 records; this one has 4,050 (4,000 drawers and 50 events), enough
 * for several committed batches before the kill.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import type { ModelIdentity } from '../../embed/model-identity.js';
import { exportPalace } from '../../palace/backup/export.js';
import { importPalace } from '../../palace/backup/import.js';
import { palaceFigures } from '../../palace/backup/migrate.js';
import { openStores } from '../../stores/open.js';
import { OpenSearchConnection } from '../../stores/opensearch/connection.js';
import { dropPalaceIndices } from '../../stores/opensearch/drawer-mapping.js';
import type { PalaceStores } from '../../stores/ports/palace-stores.js';
import { clusterConfig, dropClusterPalace } from '../helpers/cluster-palace.js';
import { fillPalaceToCopy, killCopyMidway } from '../helpers/interrupted-copy.js';
import { makeTempDir, removeDir } from '../helpers/tmp.js';

const MODEL: ModelIdentity = { name: 'checkpoint-test-model', dimension: 384, weightsSha256: 'e'.repeat(64) };
const tmp = makeTempDir('mempalace-import-checkpoint-');
const embedded = (name: string) => loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: path.join(tmp, name) });

const clusterTarget = clusterConfig('imp-ckpt');
let source: PalaceStores;
let file: string;
let expected: Map<string, number | string>;

beforeAll(async () => {
  source = await openStores(embedded('source'));
  await fillPalaceToCopy(source, 'ck', 12);
  file = path.join(tmp, 'export.jsonl.gz');
  await exportPalace(source, MODEL, file);
  expected = await palaceFigures(source);
}, 120_000);

afterAll(async () => {
  await source?.close();
  await dropClusterPalace(clusterTarget);
  removeDir(tmp);
});

/** Imports `file` into palace `name` (a directory under tmp, or `cluster:<name>`) in a child process and kills it once 1,500 records were read. */
async function killedImport(name: string): Promise<void> {
  expect(await killCopyMidway('import-child.ts', [name.startsWith('cluster:') ? name : path.join(tmp, name), file, JSON.stringify(MODEL)])).toBe('SIGKILL');
}

describe('a leftover import checkpoint', () => {
  it('is ignored after the drawers are wiped, or in another palace, and every record is stored', async () => {
    await killedImport('wiped');
    // The drawer index is lost (or deleted by hand); the job store, with the checkpoint, is not.
    const wipedDir = path.join(tmp, 'wiped');
    for (const f of fs.readdirSync(wipedDir)) if (f.startsWith('drawers.')) fs.rmSync(path.join(wipedDir, f));
    const wiped = await openStores(embedded('wiped'));
    expect(await wiped.drawers.count()).toBe(0);
    const again = await importPalace(wiped, MODEL, file);
    expect(again.resumed_from).toBe(0);
    expect(again.checkpoint_discarded).toMatch(/no longer holds drawer/);
    expect(await palaceFigures(wiped)).toEqual(expected);
    await wiped.close();

    await killedImport('first');
    // Another palace that inherited the first one's job store (a copied directory, say).
    fs.mkdirSync(path.join(tmp, 'other'));
    for (const f of fs.readdirSync(path.join(tmp, 'first')))
      if (f.startsWith('jobs.sqlite3')) fs.copyFileSync(path.join(tmp, 'first', f), path.join(tmp, 'other', f));
    const other = await openStores(embedded('other'));
    const elsewhere = await importPalace(other, MODEL, file);
    expect(elsewhere.resumed_from).toBe(0);
    expect(elsewhere.checkpoint_discarded).toMatch(/different palace/);
    expect(await palaceFigures(other)).toEqual(expected);
    await other.close();

    // The palace it was written for still resumes from it.
    const first = await openStores(embedded('first'));
    const resumed = await importPalace(first, MODEL, file);
    expect(resumed.checkpoint_discarded).toBeUndefined();
    expect(resumed.resumed_from).toBeGreaterThanOrEqual(256);
    expect(await palaceFigures(first)).toEqual(expected);
    await first.close();
  });

  it("cluster: is ignored after the drawers' index is dropped, and every record is stored", async () => {
    await killedImport(`cluster:${clusterTarget.palaceName}`);
    const os = new OpenSearchConnection({ url: clusterTarget.opensearch.url, palaceName: clusterTarget.palaceName });
    await dropPalaceIndices(os).finally(() => os.close());
    const target = await openStores(clusterTarget);
    try {
      expect(await target.drawers.count()).toBe(0);
      const again = await importPalace(target, MODEL, file);
      expect(again.resumed_from).toBe(0);
      expect(again.checkpoint_discarded).toMatch(/no longer holds drawer/);
      expect(await palaceFigures(target)).toEqual(expected);
    } finally {
      await target.close();
    }
  });
});
