/**
 * How an activity stops when its runner aborts its signal (`Cancellable`): it checks the signal
 * between files and before it writes, and hands it to the embedder, which drops the call's
 * remaining runs.
 */
import { PalaceError } from '../core/errors.js';

/** Throws `cancelled` once `signal` has aborted; nothing after this call may write. */
export function stopIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new PalaceError('cancelled', 'the attempt was cancelled before it finished', { cause: signal.reason });
}

/**
 * The activities of `T` as a runner calls them: each takes a second argument, the signal that
 * stops the attempt (a cancelled job, an attempt Temporal gave up on, a worker shutting down).
 * An aborted activity stops within one file or one embedding run and writes nothing after it.
 */
export type Cancellable<T> = {
  [K in keyof T]: T[K] extends (input: infer I) => Promise<infer O> ? (input: I, signal?: AbortSignal) => Promise<O> : T[K];
};
