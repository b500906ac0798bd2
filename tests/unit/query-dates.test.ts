import { describe, expect, it } from 'vitest';
import { queryDateWindows, sessionDate } from '../../palace/search/query-dates.js';

const ref = Date.parse('2026-09-30T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const windows = (q: string) => queryDateWindows(q, ref).map((w) => [iso(w.start), iso(w.end)]);

describe('queryDateWindows', () => {
  it('reads a month, a month of a year and a day as windows', () => {
    expect(windows('what happened in March 2023')).toEqual([['2023-03-01', '2023-04-01']]);
    expect(windows('what was the news in May')).toEqual([['2026-05-01', '2026-06-01']]);
    expect(windows('what did we say on 10 March 2026')).toEqual([['2026-03-07', '2026-03-14']]);
  });

  it('resolves relative dates against the reference, into the past', () => {
    expect(windows('what went wrong last January')).toEqual([['2026-01-01', '2026-02-01']]);
    expect(windows('what did we plan last May')).toEqual([['2026-05-01', '2026-06-01']]);
    expect(windows('what did I say three weeks ago')).toEqual([['2026-09-06', '2026-09-13']]);
  });

  it('names no window for times alone, event-anchored offsets, or no date at all', () => {
    expect(windows('the job timed out at 3am')).toEqual([]);
    expect(windows('what did we buy two weeks before the trip')).toEqual([]);
    expect(windows('when is Tomas getting married')).toEqual([]);
  });
});

describe('sessionDate', () => {
  const meta = { wing: 'w', room: 'r', source_file: 'c/s1', chunk_index: 0, added_by: 'a', filed_at: '2026-12-01T10:00:00.000000Z' };
  it('takes a conversation exchange’s recorded session date, else when it was filed; other drawers have none', () => {
    expect(sessionDate({ ...meta, ingest_mode: 'convos', session_date: '2026-03-02' })).toBe(Date.parse('2026-03-02'));
    expect(sessionDate({ ...meta, ingest_mode: 'convos' })).toBe(Date.parse('2026-12-01T10:00:00Z'));
    expect(sessionDate(meta)).toBeUndefined();
  });
});
