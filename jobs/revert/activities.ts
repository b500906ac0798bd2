/**
 * The I/O steps of a revert job (jobs/revert/orchestration.ts) over palace/audit/revert.ts: each
 * plans again from the audit trail, so a step retried after a crash, or on another worker, skips
 * what the trail records as done and applies the record in flight again. The revert's own audit
 * records name the caller of the spec and, as their request id, the job.
 */
import { PalaceError } from '../../core/errors.js';
import type { RevertDeps, RevertSelection } from '../../palace/audit/revert.js';
import { finishRevert, planRevert, revertBatch } from '../../palace/audit/revert.js';
import type { ActivityDeps } from '../activity-deps.js';
import type { Cancellable } from '../cancellation.js';
import { stopIfAborted } from '../cancellation.js';
import { checkFence } from '../fence.js';
import type { RevertSpec } from '../job.js';
import type { RevertActivities } from './orchestration.js';

/** Conflicts and unrevertable records a job's result lists; the trail keeps every one. */
const RESULT_LIST_MAX = 100;

function revertDeps(deps: ActivityDeps): RevertDeps {
  const { audit, logstream, drawers, graph } = deps.stores;
  if (!audit || !logstream) throw new PalaceError('internal', 'this process runs jobs without the audit trail and logstream a revert needs');
  return { audit, logstream, drawers, graph, embedder: deps.embedder };
}

const selectionOf = (spec: RevertSpec): RevertSelection => ({ agent: spec.agent, session: spec.session, since: spec.since, wing: spec.wing });
const callerOf = (spec: RevertSpec, jobId: string) => ({ ...spec.by, request_id: jobId });

export function createRevertActivities(deps: ActivityDeps): Cancellable<RevertActivities> {
  return {
    async revertStart({ spec }) {
      const d = revertDeps(deps);
      const upTo = (await d.audit.head()).seq;
      const plan = await planRevert(d, selectionOf(spec), spec.revertId, { upTo });
      return { upTo, total: plan.records.length + plan.already_reverted.length, already: plan.already_reverted.length };
    },

    async revertBatch({ jobId, spec, upTo, confirmed, count, fence }, signal) {
      const d = revertDeps(deps);
      stopIfAborted(signal);
      if (fence) await checkFence(deps.stores.locks, fence);
      const batch = await revertBatch(d, selectionOf(spec), { revertId: spec.revertId, caller: callerOf(spec, jobId), count, upTo, confirmed, signal });
      return { ...(batch.reverted.length > 0 ? { last: batch.reverted[batch.reverted.length - 1]! } : {}), items: batch.items, conflicts: batch.conflicts,
        remaining: batch.remaining };
    },

    async revertFinish({ jobId, spec, upTo, announce, fence }) {
      const d = revertDeps(deps);
      if (fence) await checkFence(deps.stores.locks, fence);
      const o = await finishRevert(d, selectionOf(spec), { revertId: spec.revertId, caller: callerOf(spec, jobId), upTo, announce });
      return { reverted: o.reverted.length, items: o.items, conflicts: o.conflicts.slice(0, RESULT_LIST_MAX), conflicts_total: o.conflicts.length,
        not_reverted: o.not_reverted.slice(0, RESULT_LIST_MAX), not_reverted_total: o.not_reverted.length,
        ...(o.correction_event_id === undefined ? {} : { correction_event_id: o.correction_event_id }) };
    },
  };
}
