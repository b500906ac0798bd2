/**
 * Configuration and logs as an operator meets them (child processes, embedded profile): a bad
 * setting stops any command at startup naming the variable, and `mempalace serve` writes only
 * JSON log lines to stderr — its startup line, then one record per request with an id and never
 * the bearer token.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mempalace-cli-log-'));
const TSX = path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const MAIN = path.join(ROOT, 'cli', 'main.ts');

function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'LOG_LEVEL' && k !== 'LOG_FORMAT'));
  return { ...clean, MEMPALACE_PROFILE: 'embedded', MEMPALACE_ENTITY_REGISTRY: path.join(tmp, 'none.json'), ...extra };
}

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('configuration at startup', () => {
  it.each([
    ['MEMPALACE_API_RATE_PER_S', 'bogus'],
    ['LOG_LEVEL', 'loud'],
    ['MEMPALACE_JOB_LEASE_MS', '10'],
  ])('%s=%s stops `mempalace status` with exit code 2, naming the variable, and opens no palace', (variable, value) => {
    const palace = path.join(tmp, `palace-${variable}`);
    const res = spawnSync(process.execPath, [TSX, MAIN, '--palace', palace, 'status'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000,
      env: env({ [variable]: value }) });
    expect(res.status).toBe(2);
    expect(res.stderr).toContain(variable);
    expect(res.stderr).toContain(`'${value}'`);
    expect(res.stdout).toBe('');
    expect(fs.existsSync(palace)).toBe(false);
  });
});

describe('mempalace serve logs', () => {
  it('writes JSON lines to stderr: the startup record, then request records with ids and without the token', async () => {
    const token = 'tok-serve-e2e-7f3a';
    const child = spawn(process.execPath, [TSX, MAIN, '--palace', path.join(tmp, 'palace-serve'), 'serve', '--port', '0'], {
      cwd: ROOT,
      env: env({ MEMPALACE_API_TOKENS: `${token}=alice:read+write`, MEMPALACE_ALLOWED_ROOTS: tmp }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const records = () => stderr.split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l) as Record<string, unknown>);
    const waitFor = async (pred: (r: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> => {
      for (let i = 0; i < 1200; i++) {
        const found = records().find(pred);
        if (found) return found;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`no such log record; stderr so far:\n${stderr}`);
    };
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    try {
      const started = await waitFor((r) => typeof r.msg === 'string' && r.msg.startsWith('mempalace serve: http://'));
      expect(started).toMatchObject({ level: 30, pid: expect.any(Number), hostname: expect.any(String), time: expect.any(Number) });
      const url = /http:\/\/[^ ]+/.exec(String(started.msg))![0];
      const res = await fetch(`${url}/v1/jobs`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      const id = res.headers.get('x-request-id')!;
      const request = await waitFor((r) => r.reqId === id && r.res !== undefined);
      expect(request).toMatchObject({ level: 30, req: { method: 'GET', url: '/v1/jobs' }, res: { statusCode: 200 }, responseTime: expect.any(Number) });
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(records().length).toBeGreaterThanOrEqual(2);
    expect(stderr).not.toContain(token);
    expect(stdout).toBe('');
  }, 180_000);
});
