/**
 * The operational timers of docs/tools.md §11.6 for a long-lived server process: exit after a
 * stretch without requests (an agent host that forgot its server should not keep the palace open
 * for days), and warn about — or exit on — a vector-index write that has not returned (a stuck
 * writer holds SQLite's write lock and stalls every other agent).
 */
import type { Logger } from '../core/log.js';

/** Exit code of a write-stall exit: EX_TEMPFAIL, so a supervisor restarts the server. */
export const WRITE_STALL_EXIT_CODE = 75;

export interface WatchdogOptions {
  /** Hours without a request before `onIdle` runs; 0 disables. */
  idleHours: number;
  /** Seconds a V tool may run before a warning; 0 disables. */
  writeStallWarnSeconds: number;
  /** Seconds a V tool may run before `onWriteStall` runs; 0 disables. */
  writeStallExitSeconds: number;
  log: Logger;
  onIdle: () => void;
  onWriteStall: () => void;
}

export class ServerWatchdogs {
  private idleTimer: NodeJS.Timeout | undefined;
  private idleClock = false;

  constructor(private readonly opts: WatchdogOptions) {}

  /** Starts the idle clock (stdio servers only); every `request()` restarts it. */
  startIdleClock(): void {
    this.idleClock = true;
    this.request();
  }

  request(): void {
    if (!this.idleClock || this.opts.idleHours <= 0) return;
    clearTimeout(this.idleTimer);
    const hours = this.opts.idleHours;
    this.idleTimer = setTimeout(() => {
      this.opts.log.info(`mempalace mcp: no request for ${hours} h (MEMPALACE_MCP_IDLE_HOURS); exiting`);
      this.opts.onIdle();
    }, hours * 3_600_000);
    this.idleTimer.unref();
  }

  /** Runs one V tool call under the stall timers. */
  async guardWrite<T>(tool: string, call: () => Promise<T>): Promise<T> {
    const started = Date.now();
    const timers: NodeJS.Timeout[] = [];
    const { writeStallWarnSeconds: warn, writeStallExitSeconds: exit } = this.opts;
    if (warn > 0) {
      timers.push(setTimeout(() => this.opts.log.warn(`mempalace mcp: ${tool} has not returned after ${warn} s (write stall?)`), warn * 1000));
    }
    if (exit > 0) {
      timers.push(
        setTimeout(() => {
          this.opts.log.error(
            `mempalace mcp: ${tool} has not returned after ${exit} s (MEMPALACE_MCP_WRITE_STALL_EXIT_SECS); exiting with code ${WRITE_STALL_EXIT_CODE}`,
          );
          this.opts.onWriteStall();
        }, exit * 1000),
      );
    }
    try {
      return await call();
    } finally {
      for (const t of timers) clearTimeout(t);
      if (warn > 0 && Date.now() - started >= warn * 1000)
        this.opts.log.warn(`mempalace mcp: ${tool} returned after ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
  }

  stop(): void {
    this.idleClock = false;
    clearTimeout(this.idleTimer);
  }
}
