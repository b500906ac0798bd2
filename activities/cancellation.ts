/**
 * How a runner stops an activity attempt it no longer waits for (Temporal cancelled it: timed out,
 * heartbeat lost, worker shutting down): each activity takes an optional AbortSignal, checks it
 * between files and before it writes, and hands it to the embedder, so a given-up attempt stops
 * within one embedding run instead of running to its end beside its retry.
 */
import { PalaceError } from '../core/errors.js';

/** The activities of `T`, each taking the signal that stops its attempt as a second argument. */
export type Cancellable<T> = {
  [K in keyof T]: T[K] extends (input: infer I) => Promise<infer O> ? (input: I, signal?: AbortSignal) => Promise<O> : T[K];
};

/** Throws `cancelled` once `signal` has aborted; nothing after this call may write. */
export function stopIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new PalaceError('cancelled', 'the attempt was cancelled before it finished', { cause: signal.reason });
}
