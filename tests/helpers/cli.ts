/**
 * The `mempalace` command as a user runs it, for end-to-end tests: a child process that runs
 * cli/main.ts from source under tsx, in the repository root, with the test's environment on top
 * of this process's. One runner, so every CLI test starts the command the same way.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');

/** The arguments after `node` that start the CLI from source. */
export const CLI_ARGS = [path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), path.join(ROOT, 'cli', 'main.ts')];

export interface CliOptions {
  /** Added to this process's environment. */
  env?: Record<string, string | undefined>;
  /** Written to the command's stdin. */
  input?: string;
  /** Default 240 s. */
  timeoutMs?: number;
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `mempalace ...args` to its end. */
export function runCli(args: string[], options: CliOptions = {}): CliRun {
  const res = spawnSync(process.execPath, [...CLI_ARGS, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 240_000,
    ...(options.input !== undefined ? { input: options.input } : {}),
    env: { ...process.env, ...options.env },
  });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

export interface JsonCliRun<J = Record<string, unknown>> extends CliRun {
  /** What the command printed, parsed; {} when it printed nothing. */
  json: J;
}

/**
 * A runner of `mempalace --palace <palace> --json ...args` on the embedded profile with `env`
 * added (an entity registry of the test's own, the allowed roots).
 */
export function embeddedJsonCli<J = Record<string, unknown>>(palace: string, env: Record<string, string> = {}): (...args: string[]) => JsonCliRun<J> {
  return (...args) => {
    const run = runCli(['--palace', palace, '--json', ...args], { env: { MEMPALACE_PROFILE: 'embedded', ...env } });
    return { ...run, json: (run.stdout.trim() ? JSON.parse(run.stdout) : {}) as J };
  };
}
