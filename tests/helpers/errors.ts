/**
 * Catching the structured error a call is expected to refuse with, so a test can assert its
 * code, field and rule. Anything thrown that is not a PalaceError is rethrown unchanged, and a
 * call that does not fail fails the test.
 */
import { PalaceError } from '../../core/errors.js';

/** The PalaceError `promise` rejects with, or undefined when it fulfils. */
export async function palaceRejection(promise: Promise<unknown>): Promise<PalaceError | undefined> {
  try {
    await promise;
    return undefined;
  } catch (e) {
    if (e instanceof PalaceError) return e;
    throw e;
  }
}

/** The PalaceError `promise` rejects with; fulfilling fails with "expected <expected>". */
export async function rejectionOf(promise: Promise<unknown>, expected = 'a PalaceError'): Promise<PalaceError> {
  const error = await palaceRejection(promise);
  if (error) return error;
  throw new Error(`expected ${expected}`);
}

/** The PalaceError `fn` throws; returning normally fails with "expected a PalaceError". */
export function thrownBy(fn: () => unknown): PalaceError {
  try {
    fn();
  } catch (e) {
    if (e instanceof PalaceError) return e;
    throw e;
  }
  throw new Error('expected a PalaceError');
}
