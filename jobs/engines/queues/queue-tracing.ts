/**
 * Trace context across BullMQ (OpenTelemetry messaging conventions): the producer's span context
 * travels in the job's data under one reserved key, and the consumer's span continues that trace.
 * With no SDK started the API's propagator injects nothing and the key is absent.
 */
import type { Attributes } from '@opentelemetry/api';
import { SpanKind, context, propagation } from '@opentelemetry/api';
import type { Job } from 'bullmq';
import { inSpan } from '../../../core/tracing.js';

/** The key of job data that carries the trace context; removed before a handler sees the data. */
const TRACE_KEY = '_trace';

/** The wing and mempalace job id a queued job is about, where its data names them. */
function subjectOf(data: unknown): Attributes {
  const d = (typeof data === 'object' && data !== null ? data : {}) as { wing?: unknown; job_id?: unknown; spec?: { wing?: unknown } };
  const wing = d.spec?.wing ?? d.wing;
  return { ...(typeof wing === 'string' ? { 'mempalace.wing': wing } : {}), ...(typeof d.job_id === 'string' ? { 'mempalace.job.id': d.job_id } : {}) };
}

function messagingAttributes(queue: string, operation: 'send' | 'process', name: string): Attributes {
  return { 'messaging.system': 'bullmq', 'messaging.destination.name': queue, 'messaging.operation.type': operation, 'messaging.operation.name': name };
}

/** Adds a job in a producer span; the data carries the span's context. */
export function sendTraced<D, J extends { id?: string | undefined }>(queue: string, name: string, data: D, add: (data: D) => Promise<J>): Promise<J> {
  return inSpan(`send ${queue}`, { kind: SpanKind.PRODUCER, attributes: { ...messagingAttributes(queue, 'send', name), ...subjectOf(data) } }, async (span) => {
    const carrier: Record<string, string> = {};
    propagation.inject(context.active(), carrier);
    const job = await add(Object.keys(carrier).length > 0 ? { ...data, [TRACE_KEY]: carrier } : data);
    if (job.id) span.setAttribute('messaging.message.id', job.id);
    return job;
  });
}

/** Runs a consumer's handler in a span continuing the producer's trace; the handler sees the data without the carrier. */
export function processTraced<D, R>(queue: string, handle: (job: Job<D>) => Promise<R>): (job: Job<D>) => Promise<R> {
  return (job) => {
    const { [TRACE_KEY]: carrier, ...data } = (job.data ?? {}) as Record<string, unknown>;
    if (carrier !== undefined) job.data = data as D;
    const parent = propagation.extract(context.active(), (carrier ?? {}) as Record<string, string>);
    return inSpan(`process ${queue}`, {
      kind: SpanKind.CONSUMER,
      parent,
      attributes: { ...messagingAttributes(queue, 'process', job.name), ...(job.id ? { 'messaging.message.id': job.id } : {}), ...subjectOf(data) },
    }, () => handle(job));
  };
}
