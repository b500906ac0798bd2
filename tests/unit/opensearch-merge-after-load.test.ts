/** The OpenSearch adapter's background merge: started once a load of enough rows has gone quiet, never for small writes. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MERGE_AFTER_ROWS, MERGE_QUIET_MS, MergeAfterLoad } from '../../stores/opensearch/segment-merge.js';

describe('MergeAfterLoad', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('merges once, after the last write of a large load has been quiet long enough', () => {
    const merge = vi.fn(async () => true);
    const merges = new MergeAfterLoad(merge);
    for (let i = 0; i < 40; i++) {
      merges.noteWrites(MERGE_AFTER_ROWS / 20);
      vi.advanceTimersByTime(MERGE_QUIET_MS / 2);
    }
    expect(merge).not.toHaveBeenCalled();
    vi.advanceTimersByTime(MERGE_QUIET_MS);
    expect(merge).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(10 * MERGE_QUIET_MS);
    expect(merge).toHaveBeenCalledTimes(1);
  });

  it('does not merge after small writes, nor after close', () => {
    const merge = vi.fn(async () => true);
    const merges = new MergeAfterLoad(merge);
    merges.noteWrites(MERGE_AFTER_ROWS - 1);
    vi.advanceTimersByTime(10 * MERGE_QUIET_MS);
    expect(merge).not.toHaveBeenCalled();
    merges.noteWrites(1);
    merges.close();
    vi.advanceTimersByTime(10 * MERGE_QUIET_MS);
    expect(merge).not.toHaveBeenCalled();
  });

  it('keeps going when a merge cannot start', async () => {
    const merge = vi.fn(async () => {
      throw new Error('node busy');
    });
    const merges = new MergeAfterLoad(merge);
    merges.noteWrites(MERGE_AFTER_ROWS);
    vi.advanceTimersByTime(MERGE_QUIET_MS);
    await Promise.resolve();
    merges.noteWrites(MERGE_AFTER_ROWS);
    vi.advanceTimersByTime(MERGE_QUIET_MS);
    expect(merge).toHaveBeenCalledTimes(2);
  });
});
