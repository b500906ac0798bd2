/**
 * Real loggers (core/log.ts, JSON format) for tests: one that keeps its records in memory, one
 * that writes nothing, one that writes only errors (to stderr, so a failing run keeps them).
 */
import type { Logger, LogLevel } from '../../core/log.js';
import { createLogger } from '../../core/log.js';

export interface LogRecord {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface CapturedLog {
  log: Logger;
  records: LogRecord[];
  /** The messages, in order. */
  messages(): string[];
}

/** A logger whose records are parsed and kept; `onRecord` sees each one as it is written. */
export function capturedLogger(level: LogLevel = 'trace', onRecord?: (record: LogRecord) => void): CapturedLog {
  const records: LogRecord[] = [];
  const log = createLogger({
    level,
    format: 'json',
    destination: {
      write: (line: string) => {
        const record = JSON.parse(line) as LogRecord;
        records.push(record);
        onRecord?.(record);
      },
    },
  });
  return { log, records, messages: () => records.map((r) => r.msg) };
}

export function quietLogger(): Logger {
  return createLogger({ level: 'silent', format: 'json' });
}

/** Errors only, to stderr: what an unexpected internal failure leaves in a test run's output. */
export function errorsOnlyLogger(): Logger {
  return createLogger({ level: 'error', format: 'json' });
}
