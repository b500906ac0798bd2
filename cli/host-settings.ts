/**
 * The agent hosts' hook settings: where they live and how `mempalace hooks install` merges its
 * entries into them. Claude Code (`settings.json`) and Codex (`hooks.json`) share one layout:
 * `hooks.<Event>` is a list of matcher groups, each with a list of `{type: "command", command,
 * timeout}` handlers. Our handlers are recognised by their command (`… hook run --hook <h>
 * --harness <host>`), so install replaces exactly them and uninstall removes exactly them.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Harness } from '../core/chat/session.js';
import { invalidArgument } from '../core/errors.js';
import type { HookName } from '../palace/hooks/agent-hooks.js';
import { shellQuote } from './shell-quote.js';

export type Scope = 'user' | 'project';

/** Host event → our hook, and how long the host may wait for it (seconds). */
const EVENTS: Record<Harness, { event: string; hook: HookName; timeout: number }[]> = {
  'claude-code': [
    { event: 'SessionStart', hook: 'session-start', timeout: 30 },
    { event: 'Stop', hook: 'stop', timeout: 60 },
    { event: 'PreCompact', hook: 'precompact', timeout: 180 },
    { event: 'SessionEnd', hook: 'session-end', timeout: 10 },
  ],
  codex: [
    { event: 'SessionStart', hook: 'session-start', timeout: 30 },
    { event: 'Stop', hook: 'stop', timeout: 60 },
    { event: 'PreCompact', hook: 'precompact', timeout: 180 },
  ],
};

const OWN_COMMAND = /\bhook run --hook (?:session-start|stop|precompact|session-end) --harness (?:claude-code|codex)\b/;

export function defaultSettingsFile(harness: Harness, scope: Scope, cwd = process.cwd()): string {
  const base = scope === 'user' ? os.homedir() : cwd;
  return harness === 'claude-code' ? path.join(base, '.claude', 'settings.json') : path.join(base, '.codex', 'hooks.json');
}

/**
 * How the host runs mempalace: `command` as the user gave it (their own shell text, e.g.
 * `node /opt/mempalace/dist/cli/main.js`), then the palace and profile as single-quoted words,
 * since the host passes the whole line to `sh -c` and a path is data, never shell syntax.
 */
export function hookBin(command: string, palace: string | undefined, profile: string | undefined): string {
  return [command, ...(palace ? ['--palace', shellQuote(palace)] : []), ...(profile ? ['--profile', shellQuote(profile)] : [])].join(' ');
}

export function hookCommand(bin: string, hook: HookName, harness: Harness): string {
  return `${bin} hook run --hook ${hook} --harness ${harness}`;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function isOwn(handler: unknown): boolean {
  return isObject(handler) && typeof handler.command === 'string' && OWN_COMMAND.test(handler.command);
}

/** The settings without our handlers; groups and events left empty by that removal are dropped. */
export function withoutOwnHooks(settings: Json): Json {
  if (!isObject(settings.hooks)) return settings;
  const hooks: Json = {};
  for (const [event, groups] of Object.entries(settings.hooks)) {
    if (!Array.isArray(groups)) {
      hooks[event] = groups;
      continue;
    }
    const kept = groups.flatMap((g) => {
      if (!isObject(g) || !Array.isArray(g.hooks) || !g.hooks.some(isOwn)) return [g];
      const rest = g.hooks.filter((h) => !isOwn(h));
      return rest.length === 0 ? [] : [{ ...g, hooks: rest }];
    });
    if (kept.length > 0 || groups.length === 0) hooks[event] = kept;
  }
  const { hooks: _dropped, ...rest } = settings;
  return Object.keys(hooks).length > 0 ? { ...rest, hooks } : rest;
}

export function withOwnHooks(settings: Json, harness: Harness, bin: string): Json {
  const base = withoutOwnHooks(settings);
  const hooks: Json = isObject(base.hooks) ? { ...base.hooks } : {};
  for (const { event, hook, timeout } of EVENTS[harness]) {
    const groups = Array.isArray(hooks[event]) ? [...(hooks[event] as unknown[])] : [];
    groups.push({ hooks: [{ type: 'command', command: hookCommand(bin, hook, harness), timeout }] });
    hooks[event] = groups;
  }
  return { ...base, hooks };
}

/** A new settings file may hold an API key (`env`): readable by its owner only. */
const NEW_FILE_MODE = 0o600;

/**
 * The file to read and rewrite. A symlinked settings file (dotfile managers keep them in a
 * repository) is followed: its target is rewritten in place and the link stays a link. A link
 * whose target does not exist is refused, so we never create a file somewhere the user did not name.
 */
async function settingsTarget(file: string): Promise<string> {
  let st;
  try {
    st = await fs.lstat(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return file;
    throw e;
  }
  if (!st.isSymbolicLink()) return file;
  try {
    return await fs.realpath(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ELOOP') throw e;
    throw invalidArgument('settings', 'symlink_target', `${file} is a symlink to ${await fs.readlink(
      file,
    )}, which does not resolve to a file; nothing was changed (create the target, or pass --settings with the real file)`);
  }
}

async function readSettings(file: string): Promise<{ text: string | undefined; json: Json; mode: number }> {
  let text: string;
  let mode: number;
  try {
    text = await fs.readFile(file, 'utf8');
    mode = (await fs.stat(file)).mode & 0o7777;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { text: undefined, json: {}, mode: NEW_FILE_MODE };
    throw e;
  }
  let json: unknown;
  try {
    json = text.trim() === '' ? {} : JSON.parse(text);
  } catch (e) {
    throw invalidArgument('settings', 'json_object', `${file} is not valid JSON (${e instanceof Error ? e.message : String(e)}); nothing was changed`);
  }
  if (!isObject(json)) throw invalidArgument('settings', 'json_object', `${file} does not hold a JSON object; nothing was changed`);
  return { text, json, mode };
}

/**
 * Replace `file` atomically with `text` at exactly `mode`: a temp file in the same directory
 * (created owner-only, then set to `mode`, whatever the umask), flushed, then renamed over it.
 */
async function writeAtomic(file: string, text: string, mode: number): Promise<void> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await fs.open(tmp, 'wx', 0o600);
  try {
    await handle.writeFile(text);
    await handle.chmod(mode);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.rename(tmp, file);
  } catch (e) {
    await fs.rm(tmp, { force: true });
    throw e;
  }
}

export interface InstallResult {
  settings_file: string;
  changed: boolean;
  backup: string | null;
  events: string[];
}

/**
 * Install (or with `uninstall`, remove) our hooks; writes only when something changes, after a
 * backup. The settings file and its backup keep the file's mode (a 0600 file holding an API key
 * stays 0600); a symlinked settings file is followed (see `settingsTarget`).
 */
export async function installHooks(o: { harness: Harness; file: string; bin: string; uninstall: boolean }): Promise<InstallResult> {
  const target = await settingsTarget(o.file);
  const { text, json, mode } = await readSettings(target);
  const next = o.uninstall ? withoutOwnHooks(json) : withOwnHooks(json, o.harness, o.bin);
  const events = EVENTS[o.harness].map((e) => e.event);
  if (JSON.stringify(next) === JSON.stringify(json)) return { settings_file: o.file, changed: false, backup: null, events };
  await fs.mkdir(path.dirname(target), { recursive: true });
  let backup: string | null = null;
  if (text !== undefined) {
    backup = `${o.file}.mempalace.bak`;
    await writeAtomic(backup, text, mode);
  }
  await writeAtomic(target, `${JSON.stringify(next, null, 2)}\n`, mode);
  return { settings_file: o.file, changed: true, backup, events };
}
