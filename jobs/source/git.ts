/**
 * The one way this project runs git against a source: only the transport the source policy
 * approved (GIT_ALLOW_PROTOCOL and protocol.allow, so no `ext::`, no redirects to another
 * scheme or host), no prompts, no hooks, no system config, no inherited GIT_* variables, the
 * https host pinned to the addresses the policy checked (no DNS rebinding between check and
 * connect), a wall-clock timeout and a cap on the bytes the command leaves in its directory.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { PalaceError } from '../../core/errors.js';
import type { Config } from '../../core/config.js';
import type { GitTarget } from '../../palace/sources/sources.js';
import type { Askpass } from './git-askpass.js';
import { askpassFor } from './git-askpass.js';

export interface GitLimits {
  timeoutMs: number;
  maxBytes: number;
}

/** The limits configured for this process (MEMPALACE_GIT_TIMEOUT_S, MEMPALACE_GIT_MAX_MB). */
export function gitLimitsOf(config: Pick<Config, 'sources'>): GitLimits {
  return { timeoutMs: config.sources.gitTimeoutMs, maxBytes: config.sources.gitMaxBytes };
}

/**
 * Runners under `limits`: for commands reaching an approved target, or with no target for local
 * commands, which may reach no remote at all.
 */
export function hardenedGit(limits: GitLimits): (target?: GitTarget) => (args: string[], cwd?: string, capDir?: string) => Promise<string> {
  return (target) => (args, cwd, capDir) => {
    // A command reaching a remote grows the repository it runs in: that is what is capped.
    const capped = capDir ?? (target ? cwd : undefined);
    return runGit({ args, limits, ...(target ? { target } : {}), ...(cwd === undefined ? {} : { cwd }), ...(capped === undefined ? {} : { capDir: capped }) });
  };
}

export interface GitCommand {
  args: string[];
  /** The approved source this command talks to; absent for commands that reach no remote (no transport is allowed). */
  target?: GitTarget;
  limits: GitLimits;
  cwd?: string;
  /** Directory whose size is capped while the command runs (the clone). */
  capDir?: string;
}

/** Environment variables passed through to git; everything else (all GIT_*) is dropped. */
const PASSED_ENV = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'TMPDIR', 'SSH_AUTH_SOCK'];
const MAX_STDOUT = 16 * 1024 * 1024;
const MAX_STDERR = 64 * 1024;
const SIZE_POLL_MS = 500;

function gitEnv(target: GitTarget | undefined, askpass: Askpass | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of PASSED_ENV) if (process.env[name] !== undefined) env[name] = process.env[name];
  return {
    ...env,
    GIT_TERMINAL_PROMPT: '0',
    // A name no transport has: a local command may reach no remote at all.
    GIT_ALLOW_PROTOCOL: target?.transport ?? 'none',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_SSH_COMMAND: 'ssh -o BatchMode=yes -o ConnectTimeout=30',
    ...askpass?.env,
  };
}

function configArgs(target: GitTarget | undefined, askpass: Askpass | undefined): string[] {
  const settings = [
    ...(askpass?.config ?? []),
    'protocol.allow=never',
    ...(target ? [`protocol.${target.transport}.allow=always`] : []),
    'http.followRedirects=false',
    'core.hooksPath=/dev/null',
    'core.fsmonitor=false',
    'submodule.recurse=false',
  ];
  if (target?.transport === 'https') {
    const addresses = target.addresses.map((a) => (a.includes(':') ? `[${a}]` : a)).join(',');
    settings.push(`http.curloptResolve=${target.host}:${target.port}:${addresses}`);
  }
  return settings.flatMap((s) => ['-c', s]);
}

/** Bytes of regular files under `dir` (links are not followed). */
export async function directoryBytes(dir: string): Promise<number> {
  let total = 0;
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += await directoryBytes(p);
    else if (e.isFile()) total += await fs.lstat(p).then((s) => s.size, () => 0);
  }
  return total;
}

function gitError(rule: string, message: string): PalaceError {
  return new PalaceError('invalid_argument', message, { field: 'source', rule });
}

/** Run one git command under the limits; stdout, trimmed. A target's credential is offered through GIT_ASKPASS only. */
export async function runGit(cmd: GitCommand): Promise<string> {
  const credential = cmd.target?.transport === 'https' ? cmd.target.credential : undefined;
  const askpass = credential ? await askpassFor(credential) : undefined;
  try {
    return await spawnGit(cmd, askpass);
  } finally {
    await askpass?.dispose();
  }
}

function spawnGit(cmd: GitCommand, askpass: Askpass | undefined): Promise<string> {
  const name = cmd.args[0] ?? 'git';
  return new Promise((resolve, reject) => {
    const child = spawn('git', [...configArgs(cmd.target, askpass), ...cmd.args], { cwd: cmd.cwd, env: gitEnv(cmd.target, askpass),
      stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let refusal: PalaceError | undefined;
    const kill = (why: PalaceError) => {
      refusal ??= why;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      if (stdout.length < MAX_STDOUT) stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      if (stderr.length < MAX_STDERR) stderr += d;
    });
    const timer = setTimeout(
      () => kill(gitError('git_timeout', `git ${name} ran longer than ${Math.round(cmd.limits.timeoutMs / 1000)} s (MEMPALACE_GIT_TIMEOUT_S) and was stopped`)),
      cmd.limits.timeoutMs,
    );
    const tooLarge = (bytes: number) =>
      gitError('git_max_bytes',
        `git ${name} of ${
          cmd.target?.url ?? cmd.cwd ?? 'a local repository'
        } grew past ${cmd.limits.maxBytes} bytes (${bytes} so far; MEMPALACE_GIT_MAX_MB) and was stopped`);
    let polling = false;
    const poll = cmd.capDir === undefined ? undefined : setInterval(() => {
      if (polling) return;
      polling = true;
      void directoryBytes(cmd.capDir!).then((bytes) => {
        if (bytes > cmd.limits.maxBytes) kill(tooLarge(bytes));
      }).finally(() => {
        polling = false;
      });
    }, SIZE_POLL_MS);
    child.on('error', (e) => {
      clearTimeout(timer);
      if (poll) clearInterval(poll);
      reject(gitError('git', `git ${name} could not start: ${e.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (poll) clearInterval(poll);
      void (async () => {
        if (!refusal && cmd.capDir !== undefined) {
          const bytes = await directoryBytes(cmd.capDir);
          if (bytes > cmd.limits.maxBytes) refusal = tooLarge(bytes);
        }
        if (refusal) return reject(refusal);
        if (code !== 0) return reject(gitError('git', `git ${name} failed: ${stderr.trim() || `exit code ${code}`}`));
        resolve(stdout.trim());
      })();
    });
  });
}
