import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import type { LogFormat } from '../../core/log.js';
import { REDACTED, createLogger, prettyLine, redactUrl } from '../../core/log.js';

function sink(level: string, format: LogFormat = 'json') {
  const lines: string[] = [];
  const log = createLogger({ level: loadConfig({ HOME: '/tmp/h', LOG_LEVEL: level }).log.level, format,
    destination: { write: (line: string) => lines.push(line) } });
  return { log, lines };
}

describe('the process logger', () => {
  it('honours LOG_LEVEL: records below it are dropped', () => {
    const { log, lines } = sink('warn');
    log.debug('debug record');
    log.info('info record');
    log.warn('warn record');
    log.error('error record');
    expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(['warn record', 'error record']);
    const all = sink('trace');
    all.log.trace('t');
    all.log.debug('d');
    expect(all.lines).toHaveLength(2);
    const none = sink('silent');
    none.log.error('e');
    expect(none.lines).toEqual([]);
  });

  it('writes one JSON object per line with level, time, pid and host', () => {
    const { log, lines } = sink('info');
    log.info({ job_id: 'j1' }, 'mine started');
    expect(lines).toHaveLength(1);
    expect(lines[0]!.endsWith('\n')).toBe(true);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 30, msg: 'mine started', job_id: 'j1', pid: process.pid, time: expect.any(Number),
      hostname: expect.any(String) });
  });

  it('writes readable lines in the pretty format, with the fields and an error stack', () => {
    const { log, lines } = sink('info', 'pretty');
    log.warn({ variable: 'X' }, 'a warning');
    log.error({ err: new Error('boom') }, 'it failed');
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}a warning variable=X\n$/);
    expect(lines[1]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} ERROR it failed\n {4}Error: boom\n {5,}at /);
    expect(lines.join('')).not.toContain('{');
    expect(prettyLine('not json')).toBe('not json');
  });

  it.each(['json', 'pretty'] as const)('never writes a credential (%s)', (format) => {
    const { log, lines } = sink('info', format);
    log.info({
      req: { method: 'GET', url: '/v1/search',
        headers: { authorization: 'Bearer sk-live-1', cookie: 'session=sk-live-2', 'x-gitlab-token': 'sk-live-3', host: 'h' }, query: { token: 'sk-live-4' } },
      token: 'sk-live-5',
      peer: { name: 'b', token: 'sk-live-6', password: 'sk-live-7' },
      secret: 'sk-live-8',
    }, 'request');
    const text = lines.join('');
    expect(text).not.toMatch(/sk-live-\d/);
    expect(text).toContain(REDACTED);
    expect(text).toContain('/v1/search');
  });

  it('replaces token query values in URLs', () => {
    expect(redactUrl('/logstream/stream?token=abc&room=r')).toBe(`/logstream/stream?token=${REDACTED}&room=r`);
    expect(redactUrl('/x?room=r&access_token=abc#f')).toBe(`/x?room=r&access_token=${REDACTED}#f`);
    expect(redactUrl('/v1/search?tokens=3')).toBe('/v1/search?tokens=3');
  });
});
