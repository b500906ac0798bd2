/**
 * `migrate` killed midway continues where it stopped (issue 24, X1). A child process copies an
 * embedded palace into a cluster palace (OpenSearch, Neo4j, Redis) and is killed with SIGKILL
 * once 1,500 of its 4,050 records were read; migrating again resumes from the checkpoint the
 * copy kept in the target, instead of starting over, and ends with a verified, identical copy
 * without duplicate events. Once complete, its checkpoint is gone: the next migration copies all.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import type { ModelIdentity } from '../../embed/model-identity.js';
import { migratePalace } from '../../palace/backup/migrate.js';
import { openStores } from '../../stores/open.js';
import { clusterConfig, dropClusterPalace } from '../helpers/cluster-palace.js';
import { eventDraft } from '../helpers/events.js';
import { COPY_DRAWERS, fillPalaceToCopy, killCopyMidway } from '../helpers/interrupted-copy.js';
import { makeTempDir, removeDir } from '../helpers/tmp.js';

const MODEL: ModelIdentity = { name: 'migrate-resume-model', dimension: 384, weightsSha256: 'f'.repeat(64) };
const tmp = makeTempDir('mempalace-migrate-resume-');
const sourceConfig = loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: path.join(tmp, 'source') });
const targetConfig = clusterConfig('mig-resume');

afterAll(async () => {
  await dropClusterPalace(targetConfig);
  removeDir(tmp);
});

describe('migrate killed midway', () => {
  it('resumes from its checkpoint on the next run and ends with a verified copy', async () => {
    const source = await openStores(sourceConfig);
    await fillPalaceToCopy(source, 'mg', 13);
    expect(await killCopyMidway('migrate-child.ts', [sourceConfig.palaceDir, targetConfig.palaceName, JSON.stringify(MODEL)])).toBe('SIGKILL');

    const target = await openStores(targetConfig);
    const partial = await target.drawers.count();
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(COPY_DRAWERS);
    const resumed = await migratePalace(source, target, MODEL);
    expect(resumed.copy.checkpoint_discarded).toBeUndefined();
    expect(resumed.copy.resumed_from).toBeGreaterThanOrEqual(256);
    expect(resumed.copy.resumed_from).toBeLessThanOrEqual(partial);
    expect(resumed.verification.mismatches).toEqual([]);
    expect(resumed.verification.ok).toBe(true);

    // Done: the checkpoint is gone, so a later migration (of a changed source) copies everything.
    await source.logstream.append(eventDraft({ body: 'later' }));
    const later = await migratePalace(source, target, MODEL);
    expect(later.copy.resumed_from).toBe(0);
    expect(later.verification.ok).toBe(true);
    await target.close();
    await source.close();
  });
});
