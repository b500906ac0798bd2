/**
 * The job engine as a caller with wing grants sees it. A job is refused before it starts (no
 * job record) unless it writes wings the caller may write: a mine and a sync must name their
 * wing (the wing a mine derives from its source is only known on the worker), a delete by
 * source needs write on every wing holding that source, and a re-embed (every wing) is refused.
 * A job is visible when its wing is readable; one that records no wing (a delete by source)
 * when a grant holder started it and every wing it touched is readable; others are not found.
 */
import { notFound } from '../../core/errors.js';
import type { JobEngine, JobProgress, JobSpec } from '../../stores/ports/job-engine.js';
import type { JobStore } from '../../stores/ports/job-store.js';
import type { WingView } from './wing-view.js';
import { withOverrides } from './with-overrides.js';

/** The wings a job with no wing in its record touched, kept beside the job records. */
const wingsKey = (jobId: string) => `access:${jobId}:wings`;

export function grantedJobs(inner: JobEngine, store: JobStore, view: WingView): JobEngine {
  const visible = async (p: JobProgress): Promise<boolean> => {
    if (p.wing !== undefined) return view.readable(p.wing);
    const wings = await store.getBlob(wingsKey(p.job_id));
    return Array.isArray(wings) && wings.every((w) => typeof w === 'string' && view.readable(w));
  };
  const shown = async (jobId: string): Promise<JobProgress> => {
    const p = await inner.progress(jobId);
    if (!(await visible(p))) throw notFound('job', jobId);
    return p;
  };
  /** The wings `spec` writes, each checked writable; undefined when the record names its wing. */
  const checkedWings = async (spec: JobSpec): Promise<string[] | undefined> => {
    switch (spec.kind) {
      case 'mine':
        view.assertWritable(view.requireWing(spec.wing, 'a mine'), 'mine');
        return undefined;
      case 'sync':
        view.assertWritable(view.requireWing(spec.wing, 'a sync'), 'sync');
        return undefined;
      case 'delete_by_source': {
        const wings = await view.wingsHolding({ sourceFile: spec.sourceFile });
        for (const wing of wings) view.assertWritable(wing, 'delete by source');
        return wings;
      }
      case 'reembed':
        return view.refuseWhole('re-embedding');
    }
  };
  return withOverrides(inner, {
    async start(spec) {
      const wings = await checkedWings(spec);
      const started = await inner.start(spec);
      if (wings) await store.putBlob(wingsKey(started.job_id), wings);
      return started;
    },
    progress: shown,
    async wait(jobId, timeoutMs, onProgress) {
      await shown(jobId);
      return inner.wait(jobId, timeoutMs, onProgress);
    },
    async cancel(jobId) {
      await shown(jobId);
      return inner.cancel(jobId);
    },
    async list(limit) {
      const all = await inner.list(limit);
      const keep = await Promise.all(all.map(visible));
      return all.filter((_, i) => keep[i]);
    },
  });
}
