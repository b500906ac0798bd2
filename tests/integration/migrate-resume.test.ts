/**
 * `migrate` killed midway continues where it stopped (issue 24, X1). A child process copies an
 * embedded palace into a cluster palace (OpenSearch, Neo4j, Redis) and is killed with SIGKILL
 * once 1,500 of its 4,050 records were read; migrating again resumes from the checkpoint the
 * copy kept in the target, instead of starting over, and ends with a verified, identical copy
 * without duplicate events. Once complete, its checkpoint is gone: the next migration copies all.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import type { ModelIdentity } from '../../embed/model-identity.js';
import { migratePalace } from '../../palace/migrate.js';
import { openStores } from '../../stores/open.js';
import { drawer, randomUnitVector, seededRandom } from '../contract/drawer-index.fixtures.js';
import { clusterConfig, dropClusterPalace } from '../helpers/cluster-palace.js';
import { makeTempDir, removeDir } from '../helpers/tmp.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const MODEL: ModelIdentity = { name: 'migrate-resume-model', dimension: 384, weightsSha256: 'f'.repeat(64) };
const DRAWERS = 4000;
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
    const rnd = seededRandom(13);
    for (let start = 0; start < DRAWERS; start += 500) {
      await source.drawers.upsert(Array.from({ length: 500 }, (_, k) => drawer(`mg_${String(start + k).padStart(5, '0')}`, `row ${start + k} text`, randomUnitVector(rnd, 384), { wing: `w${k % 3}`, room: `r${k % 7}` })));
    }
    for (let i = 0; i < 50; i++) {
      await source.logstream.append({ type: 'note', stream: 's', room: 'general', topic: null, from_agent: 'a', to_agent: null, correlation_id: null, branch: null, base_commit: null, status: null, body: `e${i}`, metadata_json: '{}', artifact_ids: [] });
    }

    // `--import tsx`, not tsx's CLI: the CLI runs the script in a grandchild SIGKILL would miss.
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'tests', 'fixtures', 'migrate-child.ts'), sourceConfig.palaceDir, targetConfig.palaceName, JSON.stringify(MODEL)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if ([...chunk.toString().matchAll(/read (\d+)/g)].some((m) => Number(m[1]) >= 1500)) {
          child.kill('SIGKILL');
          resolve();
        }
        if (chunk.toString().includes('done')) reject(new Error('the migration finished before it could be killed'));
      });
    });
    expect(await exited).toBe('SIGKILL');

    const target = await openStores(targetConfig);
    const partial = await target.drawers.count();
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(DRAWERS);
    const resumed = await migratePalace(source, target, MODEL);
    expect(resumed.copy.checkpoint_discarded).toBeUndefined();
    expect(resumed.copy.resumed_from).toBeGreaterThanOrEqual(256);
    expect(resumed.copy.resumed_from).toBeLessThanOrEqual(partial);
    expect(resumed.verification.mismatches).toEqual([]);
    expect(resumed.verification.ok).toBe(true);

    // Done: the checkpoint is gone, so a later migration (of a changed source) copies everything.
    await source.logstream.append({ type: 'note', stream: 's', room: 'general', topic: null, from_agent: 'a', to_agent: null, correlation_id: null, branch: null, base_commit: null, status: null, body: 'later', metadata_json: '{}', artifact_ids: [] });
    const later = await migratePalace(source, target, MODEL);
    expect(later.copy.resumed_from).toBe(0);
    expect(later.verification.ok).toBe(true);
    await target.close();
    await source.close();
  });
});
