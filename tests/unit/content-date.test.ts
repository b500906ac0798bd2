import { describe, expect, it } from 'vitest';
import { calendarDate, contentDate, dateFromBody, dateFromFileName, dateFromFrontMatter, splitFrontMatter } from '../../core/content-date.js';

describe('content date from the file name (docs/palace-behaviour.md §4.7.3 step 1)', () => {
  it('takes an ISO-like date bounded by non-word characters', () => {
    expect(dateFromFileName('2024-06-01 notes.md')).toBe('2024-06-01');
    expect(dateFromFileName('/some/dir/report 2023.1.5.txt')).toBe('2023-01-05');
    expect(dateFromFileName('log-2024/6/9.md')).toBe(undefined); // the path separator ends the name
  });

  it('does not retry after an invalid first ISO match', () => {
    expect(dateFromFileName('2024-02-30 then 2024-03-01.md')).toBeUndefined();
  });

  it('accepts complete shaped dates after removing ordinals and turning - and _ into spaces', () => {
    expect(dateFromFileName('notes_2024_06_01.md')).toBe('2024-06-01');
    expect(dateFromFileName('meeting-Nov-8th-2024.md')).toBe('2024-11-08');
    expect(dateFromFileName('standup 3rd March 2025.txt')).toBe('2025-03-03');
    expect(dateFromFileName('Sept. 14 2022.md')).toBe('2022-09-14');
    expect(dateFromFileName('2024-06.md')).toBeUndefined();
    expect(dateFromFileName('Nov 8.md')).toBeUndefined();
    expect(dateFromFileName('Feb 30 2024.md')).toBeUndefined();
    expect(dateFromFileName('November.md')).toBeUndefined();
  });
});

describe('content date from front matter (step 2)', () => {
  it('reads date, created or published in that order', () => {
    const text = '---\ntitle: x\ncreated: 2021-04-05\npublished: 2022-01-01\n---\nBody 2020-01-01\n';
    const { frontMatter, body } = splitFrontMatter(text);
    expect(body).toBe('Body 2020-01-01\n');
    expect(dateFromFrontMatter(frontMatter!)).toBe('2021-04-05');
    expect(contentDate({ fileName: 'a.md', text })).toBe('2021-04-05');
    expect(dateFromFrontMatter('\ndate: not a date\npublished: "March 3, 2020"\n')).toBe('2020-03-03');
    expect(dateFromFrontMatter('\ndate: 2024-06-01T10:00:00-05:00\n')).toBe('2024-06-01');
    expect(dateFromFrontMatter('\n: : bad yaml [\n')).toBeUndefined();
  });

  it('falls through to the body when front matter has no date', () => {
    expect(contentDate({ fileName: 'a.md', text: '\n---\ntitle: x\n---\nWritten 2019-12-31.' })).toBe('2019-12-31');
  });
});

describe('content date from the body (step 3)', () => {
  it('reads only the first 10 lines', () => {
    const lines = Array.from({ length: 10 }, () => 'filler');
    expect(dateFromBody([...lines, '2024-01-02'].join('\n'))).toBeUndefined();
    expect(dateFromBody([...lines.slice(1), '2024-01-02'].join('\n'))).toBe('2024-01-02');
  });

  it('decides day-first from any first number above 12, and maps two-digit years', () => {
    const dates = { 'Met on 03/04/2024.': '2024-03-04', 'Met on 03/04/2024, again 25/04/2024.': '2024-04-03', 'On 1-2-99': '1999-01-02',
      'On 1/2/05': '2005-01-02', 'On 2/30/2024, the 5th May 2023': '2023-05-05' };
    for (const [body, date] of Object.entries(dates)) expect(dateFromBody(body), body).toBe(date);
  });

  it('accepts the gated natural-language shapes', () => {
    expect(dateFromBody('Minutes of the meeting held on 5th May 2023')).toBe('2023-05-05');
    expect(dateFromBody('Posted: Jan. 2nd, 2021')).toBe('2021-01-02');
    expect(dateFromBody('We met in May 2023 and on the 8th.')).toBeUndefined();
  });
});

describe('contentDate (docs/palace-behaviour.md §4.7.3)', () => {
  it('prefers the file name, then falls back to the mtime as a local date', () => {
    expect(contentDate({ fileName: '2020-01-01.md', text: 'date 2021-01-01' })).toBe('2020-01-01');
    const mtimeMs = new Date(2022, 6, 15, 12, 0, 0).getTime();
    expect(contentDate({ fileName: 'x.md', text: 'no dates', mtimeMs })).toBe('2022-07-15');
    expect(contentDate({ fileName: 'x.md', text: 'no dates', mtimeMs: Date.UTC(2022, 0, 1, 23, 30), mtimeZone: 'utc' })).toBe('2022-01-01');
    expect(contentDate({ fileName: 'x.md', text: 'no dates' })).toBeUndefined();
  });

  it('checks real calendar dates', () => {
    expect(calendarDate(2024, 2, 29)).toBe('2024-02-29');
    expect(calendarDate(2023, 2, 29)).toBeUndefined();
    expect(calendarDate(99, 1, 1)).toBe('0099-01-01');
  });
});
