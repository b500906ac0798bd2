/**
 * The synthetic palace the drawer benchmarks share: clustered 384-d unit vectors (200 drawers per
 * cluster centre), 5 % of the drawers in a `rare` wing, 50 rooms, 1,000 source files, 10 chunk
 * indexes. The caller supplies each drawer's text from the same seeded generator, drawn before
 * the drawer's vector, so a corpus is reproducible from its seed.
 */
import type { DrawerWrite } from '../../core/drawer.js';
import { drawer, filedAt, nearVector, randomUnitVector, seededRandom } from '../../tests/contract/drawer-index.fixtures.js';

export const DIM = 384;

export function syntheticCorpus(n: number, seed: number, text: (i: number, rnd: () => number) => string): { rows: DrawerWrite[]; centers: Float32Array[] } {
  const rnd = seededRandom(seed);
  const centers = Array.from({ length: Math.max(50, n / 200) }, () => randomUnitVector(rnd, DIM));
  const rows = Array.from({ length: n }, (_, i) =>
    drawer(`bench_${i}`, text(i, rnd), nearVector(rnd, centers[i % centers.length]!), {
      wing: i % 20 === 0 ? 'rare' : 'common',
      room: `room_${i % 50}`,
      source_file: `/repo/src/file_${i % 1000}.ts`,
      chunk_index: i % 10,
      filed_at: filedAt(i),
    }));
  return { rows, centers };
}
