import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ServerWatchdogs } from '../../mcp/watchdogs.js';
import { capturedLogger } from '../helpers/log.js';

function watchdogs(idleHours: number, warn: number, exit: number) {
  const events: string[] = [];
  const w = new ServerWatchdogs({
    idleHours,
    writeStallWarnSeconds: warn,
    writeStallExitSeconds: exit,
    log: capturedLogger('trace', (r) => events.push(`log: ${r.msg}`)).log,
    onIdle: () => events.push('idle'),
    onWriteStall: () => events.push('stall'),
  });
  return { w, events };
}

describe('ServerWatchdogs', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('fires idle only after the full stretch since the last request, and only once the clock runs', () => {
    const { w, events } = watchdogs(2, 0, 0);
    w.request();
    vi.advanceTimersByTime(3 * 3_600_000);
    expect(events).toEqual([]);
    w.startIdleClock();
    vi.advanceTimersByTime(1.5 * 3_600_000);
    w.request();
    vi.advanceTimersByTime(1.5 * 3_600_000);
    expect(events).toEqual([]);
    vi.advanceTimersByTime(0.5 * 3_600_000);
    expect(events).toEqual(['log: mempalace mcp: no request for 2 h (MEMPALACE_MCP_IDLE_HOURS); exiting', 'idle']);
  });

  it('never fires idle with 0 hours or after stop()', () => {
    const off = watchdogs(0, 0, 0);
    off.w.startIdleClock();
    vi.advanceTimersByTime(100 * 3_600_000);
    expect(off.events).toEqual([]);
    const stopped = watchdogs(1, 0, 0);
    stopped.w.startIdleClock();
    stopped.w.stop();
    vi.advanceTimersByTime(2 * 3_600_000);
    expect(stopped.events).toEqual([]);
  });

  it('warns, then exits, on a write that outlasts the bounds; says when it finally returns', async () => {
    const { w, events } = watchdogs(0, 60, 120);
    let finish!: () => void;
    const write = w.guardWrite('mempalace_add_drawer', () =>
      new Promise<string>((resolve) => {
        finish = () => resolve('done');
      }));
    vi.advanceTimersByTime(59_000);
    expect(events).toEqual([]);
    vi.advanceTimersByTime(1_000);
    expect(events).toEqual(['log: mempalace mcp: mempalace_add_drawer has not returned after 60 s (write stall?)']);
    vi.advanceTimersByTime(60_000);
    expect(events.slice(1)).toEqual([
      'log: mempalace mcp: mempalace_add_drawer has not returned after 120 s (MEMPALACE_MCP_WRITE_STALL_EXIT_SECS); exiting with code 75',
      'stall',
    ]);
    finish();
    expect(await write).toBe('done');
    expect(events[3]).toBe('log: mempalace mcp: mempalace_add_drawer returned after 120.0 s');
  });

  it('stays silent for a write that returns in time, clears its timers, and passes errors through', async () => {
    const { w, events } = watchdogs(0, 60, 120);
    expect(await w.guardWrite('mempalace_add_drawer', async () => 7)).toBe(7);
    await expect(w.guardWrite('mempalace_add_drawer', async () => {
      throw new Error('refused');
    })).rejects.toThrow('refused');
    vi.advanceTimersByTime(1_000_000);
    expect(events).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
