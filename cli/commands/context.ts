/**
 * What a command family needs from the `mempalace` program: the global options and a runtime
 * opened (and closed) around each action. cli/main.ts builds it once for every family.
 */
import type { Config } from '../../core/config.js';
import type { Runtime } from '../../palace/runtime.js';

export interface GlobalOpts {
  palace?: string;
  profile?: string;
  json?: boolean;
}

export interface CliContext {
  globals(): GlobalOpts;
  config(): Config;
  withRuntime<T>(fn: (rt: Runtime) => Promise<T>): Promise<T>;
  /** An integer option, or a structured error naming it. */
  intOption(name: string, value: string): number;
}
