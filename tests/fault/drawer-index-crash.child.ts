/**
 * Child process of drawer-index-crash.test.ts: upserts deterministic batches into the palace
 * given as argv[2] until it is killed, reporting each committed batch on stdout.
 */
import { openSqliteDrawerIndex } from '../../stores/embedded/drawers/sqlite-drawer-index.js';
import { crashBatch } from './drawer-index-crash.rows.js';

const palace = process.argv[2]!;
const start = Number(process.argv[3] ?? 0);
const index = await openSqliteDrawerIndex(palace);
for (let b = start;; b++) {
  await index.upsert(crashBatch(b, index.dimension));
  process.stdout.write(`committed ${b}\n`);
}
