/**
 * `mempalace repair [--check]`: checks the derived drawer indexes against the drawers they are
 * built from and, unless only checking, rebuilds them and checks again.
 */
import type { IndexCheck, IndexMaintenance } from '../../stores/ports/index-maintenance.js';

export interface RepairReport {
  checked_only: boolean;
  before: IndexCheck;
  rebuilt?: Record<string, unknown>;
  after?: IndexCheck;
}

export async function repairIndexes(maintenance: IndexMaintenance, opts: { checkOnly: boolean }): Promise<RepairReport> {
  const before = await maintenance.check();
  if (opts.checkOnly) return { checked_only: true, before };
  const rebuilt = await maintenance.rebuild();
  return { checked_only: false, before, rebuilt, after: await maintenance.check() };
}
