/** The embedder's thread budget: cgroup quota parsing, the default and MEMPALACE_EMBED_THREADS. */
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import { availableCores, cgroupCpuLimit, parseCfsQuota, parseCpuMax, parseProcCgroup } from '../../embed/cpu-budget.js';
import { PalaceError } from '../../core/errors.js';

/** A fake file system of cgroup files: path → text; any other path reads as absent. */
function files(entries: Record<string, string>) {
  return (file: string) => entries[file];
}

describe('cgroup CPU quota', () => {
  it('parses v2 cpu.max, rounding partial cores up', () => {
    expect(parseCpuMax('max 100000\n')).toBeUndefined();
    expect(parseCpuMax('200000 100000\n')).toBe(2);
    expect(parseCpuMax('150000 100000')).toBe(2);
    expect(parseCpuMax('50000 100000')).toBe(1);
    expect(parseCpuMax('')).toBeUndefined();
    expect(parseCpuMax(undefined)).toBeUndefined();
    expect(parseCpuMax('garbage 100000')).toBeUndefined();
  });

  it('parses v1 cfs quota and period, -1 meaning no limit', () => {
    expect(parseCfsQuota('-1\n', '100000\n')).toBeUndefined();
    expect(parseCfsQuota('300000\n', '100000\n')).toBe(3);
    expect(parseCfsQuota('300000', undefined)).toBeUndefined();
    expect(parseCfsQuota('0', '100000')).toBeUndefined();
  });

  it('finds the v2 path and the v1 cpu controller path in /proc/self/cgroup', () => {
    expect(parseProcCgroup('0::/user.slice/app.scope\n')).toEqual({ v2: '/user.slice/app.scope' });
    expect(parseProcCgroup('4:memory:/x\n2:cpu,cpuacct:/docker/abc\n0::/\n')).toEqual({ v1Cpu: '/docker/abc', v2: '/' });
    expect(parseProcCgroup(undefined)).toEqual({});
  });

  it('takes the tightest quota over the process cgroup and its ancestors (v2)', () => {
    const read = files({
      '/proc/self/cgroup': '0::/kubepods/pod1/c1\n',
      '/cg/kubepods/pod1/c1/cpu.max': 'max 100000',
      '/cg/kubepods/pod1/cpu.max': '300000 100000',
      '/cg/kubepods/cpu.max': '800000 100000',
    });
    expect(cgroupCpuLimit(read, '/cg')).toBe(3);
  });

  it('reads the v1 quota under cpu/ or cpu,cpuacct/', () => {
    const read = files({
      '/proc/self/cgroup': '3:cpu,cpuacct:/docker/abc\n',
      '/cg/cpu,cpuacct/docker/abc/cpu.cfs_quota_us': '150000',
      '/cg/cpu,cpuacct/docker/abc/cpu.cfs_period_us': '100000',
    });
    expect(cgroupCpuLimit(read, '/cg')).toBe(2);
    expect(cgroupCpuLimit(files({ '/proc/self/cgroup': '0::/\n' }), '/cg')).toBeUndefined();
  });

  it('caps the affinity count by the quota and never goes below one', () => {
    const quota = (cpuMax: string) => files({ '/proc/self/cgroup': '0::/\n', '/cg/cpu.max': cpuMax });
    expect(availableCores(quota('max 100000'), '/cg')).toBe(os.availableParallelism());
    expect(availableCores(quota('100000 100000'), '/cg')).toBe(1);
    expect(availableCores(quota(`${100000 * (os.availableParallelism() + 4)} 100000`), '/cg')).toBe(os.availableParallelism());
  });
});

describe('MEMPALACE_EMBED_THREADS', () => {
  it('defaults to the cores available to the process', () => {
    expect(loadConfig({ HOME: '/tmp/h' }).embed.threads).toBe(availableCores());
    expect(loadConfig({ HOME: '/tmp/h', MEMPALACE_EMBED_THREADS: ' ' }).embed.threads).toBe(availableCores());
  });

  it('is overridden by a positive integer', () => {
    expect(loadConfig({ HOME: '/tmp/h', MEMPALACE_EMBED_THREADS: '1' }).embed.threads).toBe(1);
    expect(loadConfig({ HOME: '/tmp/h', MEMPALACE_EMBED_THREADS: ' 12 ' }).embed.threads).toBe(12);
  });

  it.each(['0', '-2', '1.5', 'two', '4x'])('refuses %j at startup, naming the variable', (value) => {
    let failure: unknown;
    try {
      loadConfig({ HOME: '/tmp/h', MEMPALACE_EMBED_THREADS: value });
    } catch (e) {
      failure = e;
    }
    expect(failure).toBeInstanceOf(PalaceError);
    expect((failure as PalaceError).toJSON()).toMatchObject({ code: 'invalid_argument', field: 'MEMPALACE_EMBED_THREADS', rule: 'positive_integer' });
    expect((failure as PalaceError).message).toContain('MEMPALACE_EMBED_THREADS');
  });
});

describe('MEMPALACE_EMBED_MODEL', () => {
  it('defaults to the fp32 model and passes a chosen name through', () => {
    expect(loadConfig({ HOME: '/tmp/h' }).embed.model).toBe('all-MiniLM-L6-v2');
    expect(loadConfig({ HOME: '/tmp/h', MEMPALACE_EMBED_MODEL: ' all-MiniLM-L6-v2-q ' }).embed.model).toBe('all-MiniLM-L6-v2-q');
  });
});
