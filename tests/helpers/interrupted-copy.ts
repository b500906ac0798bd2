/**
 * A palace copy killed midway, for the tests of copies that resume (import, migrate): a source
 * palace of 4,000 drawers and 50 events, and the copy run in a child process that is killed with
 * SIGKILL once it has read 1,500 records, so only what it committed survives, its checkpoint among it.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { PalaceStores } from '../../stores/ports/palace-stores.js';
import { eventDraft } from './events.js';
import { drawer, randomUnitVector, seededRandom } from '../contract/drawer-index.fixtures.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const COPY_DRAWERS = 4000;
const COPY_EVENTS = 50;
const KILL_AFTER_RECORDS = 1500;

/** Fills `stores` with what the copy reads: drawers `<idPrefix>_00000`… with seeded 384-d vectors over 3 wings and 7 rooms, then the events. */
export async function fillPalaceToCopy(stores: PalaceStores, idPrefix: string, seed: number): Promise<void> {
  const rnd = seededRandom(seed);
  for (let start = 0; start < COPY_DRAWERS; start += 500) {
    await stores.drawers.upsert(
      Array.from({ length: 500 }, (_, k) =>
        drawer(`${idPrefix}_${String(start + k).padStart(5, '0')}`, `row ${start + k} text`, randomUnitVector(rnd, 384), {
          wing: `w${k % 3}`,
          room: `r${k % 7}`,
        })),
    );
  }
  for (let i = 0; i < COPY_EVENTS; i++) await stores.logstream.append(eventDraft({ body: `e${i}` }));
}

/**
 * Runs tests/fixtures/<fixture> with `args` in a child process, which prints `read N` as it goes and
 * `done` at its end, and kills it once it has read enough records. Resolves with the signal the
 * child exited with; rejects if it finished before it could be killed.
 */
export async function killCopyMidway(fixture: string, args: string[]): Promise<NodeJS.Signals | null> {
  // `--import tsx`, not tsx's CLI: the CLI runs the script in a grandchild SIGKILL would miss.
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'tests', 'fixtures', fixture), ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if ([...chunk.toString().matchAll(/read (\d+)/g)].some((m) => Number(m[1]) >= KILL_AFTER_RECORDS)) {
        child.kill('SIGKILL');
        resolve();
      }
      if (chunk.toString().includes('done')) reject(new Error(`${fixture} finished before it could be killed`));
    });
  });
  return exited;
}
