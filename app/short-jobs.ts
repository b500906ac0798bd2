/**
 * The cluster's short jobs wired to the palace: the API side (a refresh scheduler over the
 * trigger queue, the notifications port over both queues) and the consumer side that runs in
 * every `mempalace worker` (refreshes of registered sources, auto-saves, job-end deliveries).
 */
import { deliverJobEnd } from '../jobs/notify.js';
import type { Config } from '../core/config.js';
import { invalidArgument } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { Embedder } from '../embed/embedder.js';
import { runAutoSave } from '../palace/hooks/session-save.js';
import type { JobEngine } from '../jobs/job.js';
import type { DeadLetter, Notifications } from '../palace/hooks/notifications.js';
import { deliveryError } from '../palace/hooks/notifications.js';
import type { RefreshScheduler } from '../stores/ports/refresh-scheduler.js';
import { refreshRegisteredSource, refreshSpec } from '../palace/sources/registered-sources.js';
import type { PalaceStores } from '../stores/ports/palace-stores.js';
import type { AutoSaveRequest, NotificationQueue, QueueSettings } from '../jobs/engines/queues/queues.js';
import { TriggerQueue, refreshWithJobEngine, startNotificationDeliveryWorker, startTriggerWorker } from '../jobs/engines/queues/queues.js';

export function queueSettings(config: Config): QueueSettings {
  return { redisUrl: config.redis.url, palaceName: config.palaceName };
}

/** What the notification queue's publisher adds jobs with: the configured delivery attempts. */
export function notificationQueueSettings(config: Config): QueueSettings {
  return { ...queueSettings(config), attempts: config.hooks.notifyAttempts, backoffMs: config.hooks.notifyBackoffMs };
}

/** Queue one agent-hook auto-save on the trigger queue (a short-lived hook process of the cluster profile). */
export async function queueAutoSave(config: Config, req: AutoSaveRequest): Promise<{ id: string }> {
  const queue = new TriggerQueue(queueSettings(config));
  try {
    return await queue.requestAutoSave(req);
  } finally {
    await queue.close();
  }
}

export function queueRefreshScheduler(trigger: TriggerQueue): RefreshScheduler {
  return {
    request: async (source) => {
      const { id } = await trigger.requestRefresh({ spec: refreshSpec(source, 'webhook'), sourceId: source.source_id });
      return { request_id: id };
    },
    claimDelivery: (keys, windowMs) => trigger.claimDelivery(keys, windowMs),
    releaseDelivery: (keys) => trigger.releaseDelivery(keys),
    close: async () => undefined,
  };
}

export function queueNotifications(queues: { trigger: TriggerQueue; notification: NotificationQueue }): Notifications {
  const byName = (name: string) => {
    if (name !== 'trigger' && name !== 'notification') throw invalidArgument('queue', 'one_of', 'queue must be one of: trigger, notification');
    return queues[name];
  };
  return {
    async deadLetters(): Promise<DeadLetter[]> {
      const lists = await Promise.all(
        (['trigger', 'notification'] as const).map(async (name) => (await queues[name].deadLetters()).map((d) => ({ ...d, queue: name }))),
      );
      return lists.flat();
    },
    retryDeadLetter: (queue, id) => byName(queue).retryDeadLetter(id),
    recentDeliveries: (limit) => queues.notification.recentDeliveries(limit),
  };
}

export interface ShortJobWorkers {
  close(): Promise<void>;
}

/** Consume the trigger and notification queues with this process's stores and job engine. */
export function startShortJobWorkers(rt: { config: Config; stores: PalaceStores; jobs: JobEngine; embedder: Embedder; log: Logger }): ShortJobWorkers {
  const { config, stores, jobs } = rt;
  const settings: QueueSettings = { ...queueSettings(config),
    onWorkerError: (queue, e) => rt.log.warn({ err: e, queue }, `mempalace worker: ${queue} queue consumer: ${e.message}`) };
  const plainRefresh = refreshWithJobEngine(jobs);
  const trigger = startTriggerWorker(settings, {
    refresh: (req) => (req.sourceId ? refreshRegisteredSource({ sources: stores.sources, jobs }, req.sourceId) : plainRefresh(req)),
    autoSave: (req) => runAutoSave({ config, drawers: stores.drawers, embedder: rt.embedder }, req),
  });
  const notify = { palace: config.palaceName, urls: config.hooks.notifyUrls, secret: config.hooks.notifySecret, logstream: stores.logstream };
  const notification = startNotificationDeliveryWorker(settings, (event, progress) => deliverJobEnd(notify, event, progress), deliveryError);
  return { close: async () => {
    await Promise.all([trigger.close(), notification.close()]);
  } };
}
