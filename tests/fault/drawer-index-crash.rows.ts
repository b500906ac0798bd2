/**
 * The rows the crash test's child writes: batch `b` row `i` is fully determined by (b, i), so
 * the parent can check every stored drawer against what should have been written.
 */
import type { DrawerWrite } from '../../core/drawer.js';
import { drawer, nearVector, randomUnitVector, seededRandom } from '../contract/drawer-index.fixtures.js';

export const CRASH_BATCH_SIZE = 1500;

export function crashRow(b: number, i: number, dimension: number): DrawerWrite {
  const center = randomUnitVector(seededRandom(1000 + (i % 25)), dimension);
  const embedding = nearVector(seededRandom(b * 100_000 + i + 1), center);
  return drawer(`crash_${b}_${i}`, `batch${b} row ${i} token_${b}_${i}\r\n✓`, embedding, { wing: `wing_${b % 3}`, chunk_index: i, batch: b });
}

export function crashBatch(b: number, dimension: number): DrawerWrite[] {
  return Array.from({ length: CRASH_BATCH_SIZE }, (_, i) => crashRow(b, i, dimension));
}
