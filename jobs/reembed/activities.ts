/**
 * The I/O steps of `mempalace reembed` (jobs/reembed/orchestration.ts): each re-reads the palace's model
 * record and acts only while it names this job's re-embed, so a step retried after a crash, or
 * on another worker, converges. Vectors come from an embedder of the target model or encoder set,
 * built by the composition root (`embedderFor`), whatever the worker itself serves, always from
 * the drawers' verbatim text (never from stored vectors).
 */
import { PalaceError } from '../../core/errors.js';
import type { Embedder } from '../../embed/embedder.js';
import type { ModelIdentity } from '../../embed/model-identity.js';
import { sameModel } from '../../embed/model-identity.js';
import type { Fence } from '../job.js';
import { palaceModelRecord } from '../../palace/drawers/palace-model.js';
import type { DrawerBulk } from '../../stores/ports/drawers/drawer-bulk.js';
import type { DrawerIndex } from '../../stores/ports/drawers/drawer-index.js';
import type { PalaceModelStore } from '../../stores/ports/drawers/palace-model.js';
import type { PalaceModelRecord } from '../../stores/ports/drawers/palace-model.js';
import type { Locks } from '../../stores/ports/locks.js';
import type { Cancellable } from '../cancellation.js';
import type { ReembedActivities } from './orchestration.js';
import { stopIfAborted } from '../cancellation.js';
import { checkFence } from '../fence.js';

export interface ReembedDeps {
  stores: { drawers: DrawerIndex & PalaceModelStore & DrawerBulk; locks: Locks };
  /** The embedder of a model name or an encoder set's text (unknown names are refused). */
  embedderFor(model: string): Embedder;
}

function notThisJob(record: PalaceModelRecord, jobId: string): PalaceError {
  return new PalaceError('already_running',
    `the palace's re-embed is not job ${jobId}'s: it records ${
      record.reembed ? `job ${record.reembed.jobId} to ${record.reembed.target.name}` : `${record.model.name}, with no re-embed under way`
    }`, {
    field: 'MEMPALACE_EMBED_MODEL',
    rule: 'reembed_owner',
    details: { job_id: jobId, palace_model: record.model, ...(record.reembed ? { reembed: record.reembed } : {}) },
  });
}

/** The record, checked to be `jobId`'s re-embed to `target`. */
async function ownRecord(drawers: DrawerIndex & PalaceModelStore & DrawerBulk, jobId: string, target: ModelIdentity): Promise<PalaceModelRecord> {
  const record = await palaceModelRecord(drawers, target);
  if (record.reembed?.jobId !== jobId || !sameModel(record.reembed.target, target)) throw notThisJob(record, jobId);
  return record;
}

export function createReembedActivities(deps: ReembedDeps): Cancellable<ReembedActivities> {
  const { drawers, locks } = deps.stores;
  const fenced = async (fence: Fence | undefined) => {
    if (fence) await checkFence(locks, fence);
  };
  return {
    async reembedStart({ jobId, spec }) {
      const target = deps.embedderFor(spec.model).identity;
      for (;;) {
        const record = await palaceModelRecord(drawers, target);
        if (record.reembed?.jobId === jobId) break;
        // A palace already on the target model has nothing to convert; the other cases take the
        // record over: a fresh start, or a re-embed whose job was abandoned (same lock, so not running).
        if (record.reembed === undefined && sameModel(record.model, target)) return { total: 0 };
        if (await drawers.writeModel({ model: record.model, reembed: { target, jobId } }, record)) break;
      }
      // A set of another length: the old vectors go now (the pages give every drawer its new one);
      // after a crash here the store already takes the new length and keeps the pages done so far.
      await drawers.resetEmbeddings(target.dimension);
      return { total: (await drawers.list({}, 0, 1)).total };
    },

    async reembedPage({ jobId, spec, offset, count, fence }, signal) {
      const embedder = deps.embedderFor(spec.model);
      await ownRecord(drawers, jobId, embedder.identity);
      const { items } = await drawers.list({}, offset, count);
      const vectors = await embedder.embed(items.map((d) => d.content), { signal });
      stopIfAborted(signal);
      await fenced(fence);
      return { rows: await drawers.replaceEmbeddings(new Map(items.map((d, i) => [d.id, vectors[i]!]))) };
    },

    async reembedFinish({ jobId, spec, fence }) {
      const target = deps.embedderFor(spec.model).identity;
      const record = await palaceModelRecord(drawers, target);
      // Already finished by an earlier attempt of this step, or nothing to convert.
      if (record.reembed === undefined && sameModel(record.model, target)) return;
      await ownRecord(drawers, jobId, target);
      await fenced(fence);
      if (!(await drawers.writeModel({ model: target }, record))) throw notThisJob((await drawers.readModel())!, jobId);
    },
  };
}
