/**
 * The intake of registered-source refreshes, per profile: the cluster puts a request on the BullMQ
 * trigger queue (app/short-jobs.ts), the embedded profile debounces it in-process
 * (jobs/engines/local/refresh-debouncer.ts); both end in `refreshRegisteredSource`
 * (palace/sources/registered-sources.ts).
 */
import type { RegisteredSource } from './registered-sources.js';

/**
 * `request` asks for a refresh of a registered source: requests for one source within the
 * debounce window become one, and none waits longer than the maximum wait after the first push not
 * yet processed. `claimDelivery` remembers a push delivery's keys (its id, its body's digest) for
 * the replay window: false when any was seen within it.
 */
export interface RefreshScheduler {
  request(source: RegisteredSource): Promise<{ request_id: string }>;
  claimDelivery(keys: readonly string[], windowMs: number): Promise<boolean>;
  /** Forget a claimed delivery whose handling failed, so the provider's redelivery is accepted. */
  releaseDelivery(keys: readonly string[]): Promise<void>;
  close(): Promise<void>;
}
