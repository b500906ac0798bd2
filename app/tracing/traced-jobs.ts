/**
 * Job spans the composition root adds when tracing is on: the start of a job (kind, wing, and the
 * job id it got) and each job activity (job id and wing), on both job engines. On the Temporal
 * engine these sit inside the interceptors' StartWorkflow and RunActivity spans, so the store
 * calls of an activity join the trace of the request that started the job.
 */
import type { Attributes } from '@opentelemetry/api';
import { SpanKind } from '@opentelemetry/api';
import { inSpan } from '../../core/tracing.js';
import type { JobActivities } from '../../jobs/activities.js';
import type { JobEngine, JobSpec } from '../../jobs/job.js';

function specAttributes(spec: JobSpec | undefined): Attributes {
  if (!spec) return {};
  return { 'mempalace.job.kind': spec.kind, ...('wing' in spec && typeof spec.wing === 'string' ? { 'mempalace.wing': spec.wing } : {}) };
}

/** The engine with `start` in a span naming the job it started. */
export function tracedJobEngine(engine: JobEngine): JobEngine {
  const start: JobEngine['start'] = (spec) =>
    inSpan(`mempalace.job.start ${spec.kind}`, { kind: SpanKind.INTERNAL, attributes: specAttributes(spec) }, async (span) => {
      const progress = await engine.start(spec);
      span.setAttribute('mempalace.job.id', progress.job_id);
      return progress;
    });
  return new Proxy(engine, {
    get: (target, prop) => {
      if (prop === 'start') return start;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The activities, each call in a span with the job id and wing its input names. */
export function tracedActivities(activities: JobActivities): JobActivities {
  const traced = Object.entries(activities).map(([name, activity]) => {
    const fn = activity as (input: { jobId?: string; spec?: JobSpec }, ...rest: unknown[]) => Promise<unknown>;
    const wrapped = (input: { jobId?: string; spec?: JobSpec }, ...rest: unknown[]) =>
      inSpan(`mempalace.activity ${name}`, {
        attributes: { ...specAttributes(input?.spec), ...(typeof input?.jobId === 'string' ? { 'mempalace.job.id': input.jobId } : {}) },
      }, () => fn(input, ...rest));
    return [name, wrapped] as const;
  });
  return Object.fromEntries(traced) as unknown as JobActivities;
}
