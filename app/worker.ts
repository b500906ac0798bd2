/**
 * `mempalace worker`: the composition of a job worker over the runtime's stores and embedder.
 * It builds the job activities, hands them to a Temporal worker (jobs/engines/temporal/worker.ts)
 * until SIGINT/SIGTERM (the SDK's runtime turns those into a graceful shutdown), publishes job
 * ends to the notification queue, and consumes the short-job queues (source refreshes,
 * auto-saves, job-end deliveries).
 */
import path from 'node:path';
import { createJobActivities } from '../jobs/activities.js';
import { checkNotifySettings } from '../jobs/notify.js';
import type { Runtime } from '../palace/runtime.js';
import { NotificationQueue } from '../jobs/engines/queues/queues.js';
import type { JobWorkerOptions } from '../jobs/engines/temporal/worker.js';
import { createJobWorker, installTemporalLogging } from '../jobs/engines/temporal/worker.js';
import { notificationQueueSettings, startShortJobWorkers } from './short-jobs.js';
import { activeTracing } from './tracing/sdk.js';
import { tracedActivities } from './tracing/traced-jobs.js';

export async function runJobWorker(rt: Runtime, limits: Pick<JobWorkerOptions, 'maxConcurrentActivities' | 'shutdownGraceMs'> = {}): Promise<void> {
  const { config, stores, embedder } = rt;
  installTemporalLogging(rt.log);
  checkNotifySettings(config.hooks.notifyUrls, config.hooks.notifySecret);
  const built = createJobActivities({ config, stores, embedder, embedderFor: rt.embedderFor, workspace: path.join(config.palaceDir, 'workspace') });
  const tracing = await activeTracing();
  const activities = tracing ? tracedActivities(built) : built;
  const notifications = new NotificationQueue(notificationQueueSettings(config));
  const shortJobs = startShortJobWorkers(rt);
  try {
    const worker = await createJobWorker({
      temporal: config.temporal,
      activities,
      locks: stores.locks,
      jobs: stores.jobs,
      leaseMs: config.jobLeaseMs,
      ...limits,
      notify: (p) => notifications.publish(p),
      ...(tracing ? { tracing: { spanProcessor: tracing.spanProcessor, resource: tracing.resource } } : {}),
    });
    await worker.run();
  } finally {
    await shortJobs.close();
    await notifications.close();
  }
}
