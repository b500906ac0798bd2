/**
 * The agent hosts' hook settings: where they live and how `mempalace hooks install` merges its
 * entries into them. Claude Code (`settings.json`) and Codex (`hooks.json`) share one layout:
 * `hooks.<Event>` is a list of matcher groups, each with a list of `{type: "command", command,
 * timeout}` handlers. Our handlers are recognised by their command (`… hook run --hook <h>
 * --harness <host>`), so install replaces exactly them and uninstall removes exactly them.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Harness } from '../core/chat/session.js';
import { invalidArgument } from '../core/errors.js';
import type { HookName } from '../palace/agent-hooks.js';

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

async function readSettings(file: string): Promise<{ text: string | undefined; json: Json }> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { text: undefined, json: {} };
    throw e;
  }
  let json: unknown;
  try {
    json = text.trim() === '' ? {} : JSON.parse(text);
  } catch (e) {
    throw invalidArgument('settings', 'json_object', `${file} is not valid JSON (${e instanceof Error ? e.message : String(e)}); nothing was changed`);
  }
  if (!isObject(json)) throw invalidArgument('settings', 'json_object', `${file} does not hold a JSON object; nothing was changed`);
  return { text, json };
}

export interface InstallResult {
  settings_file: string;
  changed: boolean;
  backup: string | null;
  events: string[];
}

/** Install (or with `uninstall`, remove) our hooks; writes only when something changes, after a backup. */
export async function installHooks(o: { harness: Harness; file: string; bin: string; uninstall: boolean }): Promise<InstallResult> {
  const { text, json } = await readSettings(o.file);
  const next = o.uninstall ? withoutOwnHooks(json) : withOwnHooks(json, o.harness, o.bin);
  const events = EVENTS[o.harness].map((e) => e.event);
  if (JSON.stringify(next) === JSON.stringify(json)) return { settings_file: o.file, changed: false, backup: null, events };
  await fs.mkdir(path.dirname(o.file), { recursive: true });
  let backup: string | null = null;
  if (text !== undefined) {
    backup = `${o.file}.mempalace.bak`;
    await fs.writeFile(backup, text);
  }
  const tmp = `${o.file}.${process.pid}.tmp`;
  await fs.writeFile(tmp, `${JSON.stringify(next, null, 2)}\n`);
  await fs.rename(tmp, o.file);
  return { settings_file: o.file, changed: true, backup, events };
}
