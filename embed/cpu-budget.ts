/**
 * How many cores this process may use: `os.availableParallelism()` (which respects CPU affinity)
 * capped by the CPU quota of the process's cgroup, which a container runtime sets without
 * changing the affinity mask (`docker run --cpus=2` on a 16-core host).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export type ReadText = (file: string) => string | undefined;

const readTextFile: ReadText = (file) => {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
};

/** Cores granted by a quota of `quota` µs per `period` µs, rounded up (1.5 cores may run 2 threads). */
function quotaCores(quota: number, period: number): number | undefined {
  if (!Number.isFinite(quota) || !Number.isFinite(period) || quota <= 0 || period <= 0) return undefined;
  return Math.max(1, Math.ceil(quota / period));
}

/** cgroup v2 `cpu.max`: `"<quota> <period>"`, or `"max <period>"` for no limit. */
export function parseCpuMax(text: string | undefined): number | undefined {
  const [quota, period] = (text ?? '').trim().split(/\s+/);
  if (quota === undefined || quota === 'max' || period === undefined) return undefined;
  return quotaCores(Number(quota), Number(period));
}

/** cgroup v1 `cpu.cfs_quota_us` (-1 for no limit) and `cpu.cfs_period_us`. */
export function parseCfsQuota(quotaText: string | undefined, periodText: string | undefined): number | undefined {
  if (quotaText === undefined || periodText === undefined) return undefined;
  return quotaCores(Number(quotaText.trim()), Number(periodText.trim()));
}

/** The process's cgroup paths from `/proc/self/cgroup`: the v2 path and the v1 `cpu` controller's. */
export function parseProcCgroup(text: string | undefined): { v2?: string; v1Cpu?: string } {
  const found: { v2?: string; v1Cpu?: string } = {};
  for (const line of (text ?? '').split('\n')) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line.trim());
    if (match === null) continue;
    const [, controllers, cgroupPath] = match as unknown as [string, string, string];
    if (controllers === '') found.v2 = cgroupPath;
    else if (controllers.split(',').includes('cpu')) found.v1Cpu = cgroupPath;
  }
  return found;
}

/** `dir` and each of its ancestors up to the cgroup root; a parent's limit binds its children too. */
function selfAndAncestors(root: string, cgroupPath: string): string[] {
  const dirs: string[] = [];
  let current = path.posix.normalize(`/${cgroupPath}`);
  for (;;) {
    dirs.push(path.join(root, current));
    if (current === '/') return dirs;
    current = path.posix.dirname(current);
  }
}

function smallest(values: (number | undefined)[]): number | undefined {
  const defined = values.filter((v): v is number => v !== undefined);
  return defined.length === 0 ? undefined : Math.min(...defined);
}

/**
 * The tightest CPU quota over the process's cgroup and its ancestors, v2 and v1 alike, in whole
 * cores; undefined when no quota applies. `cgroupRoot` and `read` are parameters for tests.
 */
export function cgroupCpuLimit(read: ReadText = readTextFile, cgroupRoot = '/sys/fs/cgroup'): number | undefined {
  const own = parseProcCgroup(read('/proc/self/cgroup'));
  const v2 = selfAndAncestors(cgroupRoot, own.v2 ?? '/').map((dir) => parseCpuMax(read(path.join(dir, 'cpu.max'))));
  // v1 mounts the cpu controller at cpu/ or at a combined cpu,cpuacct/ (often both, one a link).
  const v1 = ['cpu', 'cpu,cpuacct'].flatMap((mount) =>
    selfAndAncestors(path.join(cgroupRoot, mount), own.v1Cpu ?? '/').map((dir) =>
      parseCfsQuota(read(path.join(dir, 'cpu.cfs_quota_us')), read(path.join(dir, 'cpu.cfs_period_us')))
    )
  );
  return smallest([...v2, ...v1]);
}

/** The cores this process may use: the affinity count capped by any cgroup quota, at least 1. */
export function availableCores(read: ReadText = readTextFile, cgroupRoot = '/sys/fs/cgroup'): number {
  return Math.max(1, smallest([os.availableParallelism(), cgroupCpuLimit(read, cgroupRoot)])!);
}
