/**
 * How an activity stops when its runner aborts its signal (workflows/activity-types.ts,
 * `Cancellable`): it checks the signal between files and before it writes, and hands it to the
 * embedder, which drops the call's remaining runs.
 */
import { PalaceError } from '../core/errors.js';

/** Throws `cancelled` once `signal` has aborted; nothing after this call may write. */
export function stopIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new PalaceError('cancelled', 'the attempt was cancelled before it finished', { cause: signal.reason });
}
