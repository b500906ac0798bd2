/**
 * The check every fenced write makes just before it writes: the fence's lease is still the
 * current one, or it lapsed (renewals came late, a stalled process) with no other token handed
 * out since and its holder takes it back. Anything else is the writer's `stale_lease`.
 */
import { isPalaceError } from '../core/errors.js';
import type { Fence } from './job.js';
import type { Locks } from '../stores/ports/locks.js';

export async function checkFence(locks: Locks, fence: Fence): Promise<void> {
  try {
    await locks.check(fence.key, fence.token);
  } catch (e) {
    const { holder, ttlMs } = fence;
    if (!isPalaceError(e) || e.code !== 'stale_lease' || holder === undefined || ttlMs === undefined) throw e;
    if (!(await locks.reclaim(fence.key, holder, fence.token, ttlMs))) throw e;
  }
}
