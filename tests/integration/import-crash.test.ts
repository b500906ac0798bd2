/**
 * An import killed with SIGKILL midway (a separate process, so nothing of it survives but what
 * it committed) is finished by the next import of the same file: it resumes from the last
 * checkpoint, and the palace ends with exactly the exported rows, events and vectors.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import type { ModelIdentity } from '../../embed/model-identity.js';
import { exportPalace } from '../../palace/backup/export.js';
import { importPalace } from '../../palace/backup/import.js';
import { palaceFigures } from '../../palace/backup/migrate.js';
import { openStores } from '../../stores/open.js';
import { drawer, randomUnitVector, seededRandom } from '../contract/drawer-index.fixtures.js';
import { eventDraft } from '../helpers/events.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const MODEL: ModelIdentity = { name: 'crash-test-model', dimension: 384, weightsSha256: 'c'.repeat(64) };
const DRAWERS = 4000;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mempalace-import-crash-'));
const embedded = (name: string) => loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: path.join(tmp, name) });

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('import killed midway', () => {
  it('resumes from its checkpoint and ends with exactly the exported palace', async () => {
    const source = await openStores(embedded('source'));
    const rnd = seededRandom(11);
    for (let start = 0; start < DRAWERS; start += 500) {
      await source.drawers.upsert(
        Array.from({ length: 500 }, (_, k) =>
          drawer(`cr_${String(start + k).padStart(5, '0')}`, `row ${start + k} text`, randomUnitVector(rnd, 384), { wing: `w${k % 3}`, room: `r${k % 7}` })),
      );
    }
    for (let i = 0; i < 50; i++) {
      await source.logstream.append(eventDraft({ body: `e${i}` }));
    }
    const file = path.join(tmp, 'export.jsonl.gz');
    await exportPalace(source, MODEL, file);

    // `--import tsx` runs the import in the spawned process itself: through tsx's CLI it would run
    // in a grandchild that SIGKILL of the child does not reach, and would go on importing.
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'tests', 'fixtures', 'import-child.ts'), path.join(tmp, 'target'), file,
      JSON.stringify(MODEL)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        const reads = [...chunk.toString().matchAll(/read (\d+)/g)].map((m) => Number(m[1]));
        // Several batches of 256 are committed by the time 1 500 records were read.
        if (reads.some((n) => n >= 1500)) {
          child.kill('SIGKILL');
          resolve();
        }
        if (chunk.toString().includes('done')) reject(new Error('the import finished before it could be killed'));
      });
    });
    expect(await exited).toBe('SIGKILL');

    const target = await openStores(embedded('target'));
    const partial = await target.drawers.count();
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(DRAWERS);
    const resumed = await importPalace(target, MODEL, file);
    expect(resumed.resumed_from).toBeGreaterThanOrEqual(256);
    expect(resumed.resumed_from).toBeLessThanOrEqual(partial);
    expect(await palaceFigures(target)).toEqual(await palaceFigures(source));
    const sample = ['cr_00000', 'cr_01999', 'cr_03999'];
    expect(await target.drawers.embeddings(sample)).toEqual(await source.drawers.embeddings(sample));
    await target.close();
    await source.close();
  });
});
