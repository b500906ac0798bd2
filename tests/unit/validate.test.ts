import { describe, expect, it } from 'vitest';
import { thrownBy } from '../helpers/errors.js';
import { validateContent, validateDateWindow, validateEventType, validateName, validateOptionalName, validateRouting, validateTemporal,
  wingSlug } from '../../core/validate.js';
import { eventStatus } from '../../palace/logstream/validate.js';

describe('NAME', () => {
  it('accepts the spec examples', () => {
    for (const n of ['wing_code', 'My Project', "o'brien", 'v1.2', 'a', 'Zürich']) expect(validateName('wing', n)).toBe(n);
    expect(validateName('wing', '  padded ')).toBe('padded');
  });
  it('rejects with the spec messages and names the field', () => {
    expect(thrownBy(() => validateName('wing', '')).message).toBe('wing must be a non-empty string');
    expect(thrownBy(() => validateName('room', 'a/b')).message).toBe('room contains invalid path characters');
    expect(thrownBy(() => validateName('room', 'x..y')).rule).toBe('path_characters');
    expect(thrownBy(() => validateName('room', '_lead')).message).toBe('room contains invalid characters');
    expect(thrownBy(() => validateName('room', 'a'.repeat(129))).message).toBe('room exceeds maximum length of 128 characters');
    expect(thrownBy(() => validateName('room', 'a\0b')).field).toBe('room');
    expect(thrownBy(() => validateName('wing', 42)).code).toBe('invalid_argument');
  });
  it('treats blank optional names as no filter', () => {
    expect(validateOptionalName('wing', '  ')).toBeUndefined();
    expect(validateOptionalName('wing', null)).toBeUndefined();
  });
});

describe('CONTENT', () => {
  it('stores the untrimmed value and enforces the limit in code points', () => {
    expect(validateContent('  hi \n')).toBe('  hi \n');
    expect(validateContent('😀'.repeat(100_000))).toHaveLength(200_000);
    expect(thrownBy(() => validateContent('a'.repeat(100_001))).message).toBe('content exceeds maximum length of 100000 characters');
    expect(thrownBy(() => validateContent('   ')).message).toBe('content must be a non-empty string');
  });
});

describe('TEMPORAL', () => {
  it('accepts dates and UTC instants, normalising +00:00', () => {
    expect(validateTemporal('valid_from', '2026-02-28')).toBe('2026-02-28');
    expect(validateTemporal('as_of', '2026-02-28T10:00:00+00:00')).toBe('2026-02-28T10:00:00Z');
    expect(validateTemporal('as_of', '')).toBeUndefined();
  });
  it('rejects partial, naive, offset and impossible values', () => {
    for (const bad of ['2026-02', '2026-02-30', '2026-02-28T10:00:00', '2026-02-28T10:00:00+01:00', '2026-02-28T10:00:00.5Z', '2026-02-28 10:00:00Z']) {
      const e = thrownBy(() => validateTemporal('valid_from', bad));
      expect(e.field).toBe('valid_from');
      expect(e.message).toContain('is not a valid ISO-8601 date or UTC datetime');
    }
  });
});

describe('DATEBOUND', () => {
  it('orders the window and rejects inversions', () => {
    expect(validateDateWindow('2026-01-01', '2026-01-02T10:00')).toEqual({ since: '2026-01-01T00:00:00.000000Z', before: '2026-01-02T10:00:00.000000Z' });
    expect(thrownBy(() => validateDateWindow('2026-01-02', '2026-01-01')).message).toContain('must be earlier than');
    expect(thrownBy(() => validateDateWindow('yesterday', undefined)).field).toBe('since');
  });
});

describe('logstream validators', () => {
  it('checks routing fields, event types and statuses', () => {
    expect(validateRouting('stream', '  main ')).toBe('main');
    expect(thrownBy(() => validateRouting('stream', 'a\nb')).message).toBe('stream contains control characters');
    expect(thrownBy(() => validateRouting('stream', null, true)).field).toBe('stream');
    expect(validateEventType('task.created')).toBe('task.created');
    expect(thrownBy(() => validateEventType('Task')).message).toContain("type='Task' is not a valid event type");
    expect(thrownBy(() => eventStatus('done')).message).toBe("status='done' is not one of: applied, blocked, claimed, failed, open, ready, superseded");
  });
});

it('slugs wing names from directories', () => {
  expect(wingSlug('My Cool-Project')).toBe('my_cool_project');
});
