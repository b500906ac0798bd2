/**
 * The auto-save hook's two tools (docs/tools.md §7.1, §7.2). Both live in the user's MemPalace home
 * (`~/.mempalace`): hook settings under `hooks` in config.json, the save hook's last record in
 * hook_state/last_checkpoint.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** The MemPalace home (`~/.mempalace`, by the one `~` of this process): hook settings, hook state, the identity file. */
export function mempalaceHome(): string {
  return path.join(os.homedir(), '.mempalace');
}

export interface HookSettings {
  silent_save: boolean;
  desktop_toast: boolean;
}

const DEFAULTS: HookSettings = { silent_save: true, desktop_toast: false };

async function readConfig(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw e;
  }
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`${file} does not hold a JSON object`);
  return parsed as Record<string, unknown>;
}

function settingsOf(config: Record<string, unknown>): HookSettings {
  const hooks = typeof config.hooks === 'object' && config.hooks !== null ? (config.hooks as Record<string, unknown>) : {};
  return {
    silent_save: typeof hooks.silent_save === 'boolean' ? hooks.silent_save : DEFAULTS.silent_save,
    desktop_toast: typeof hooks.desktop_toast === 'boolean' ? hooks.desktop_toast : DEFAULTS.desktop_toast,
  };
}

export async function hookSettings(home: string, input: Partial<HookSettings>) {
  const file = path.join(home, 'config.json');
  try {
    const config = await readConfig(file);
    const updated: string[] = [];
    const hooks = typeof config.hooks === 'object' && config.hooks !== null ? { ...(config.hooks as Record<string, unknown>) } : {};
    for (const key of ['silent_save', 'desktop_toast'] as const) {
      const value = input[key];
      if (value === undefined) continue;
      hooks[key] = value;
      updated.push(`${key} → ${value}`);
    }
    if (updated.length > 0) {
      await fs.mkdir(home, { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      await fs.writeFile(tmp, `${JSON.stringify({ ...config, hooks }, null, 2)}\n`);
      await fs.rename(tmp, file);
    }
    const settings = settingsOf(await readConfig(file));
    return { success: true as const, settings, ...(updated.length > 0 ? { updated } : {}) };
  } catch (e) {
    return { success: false as const, error: `could not read hook settings: ${e instanceof Error ? e.message : String(e)}` };
  }
}

function checkpointRecordFile(home: string): string {
  return path.join(home, 'hook_state', 'last_checkpoint');
}

/** The save hook's record of what it filed, for the next memories_filed_away call. */
export async function recordFiledAway(home: string, msgs: number, ts: string): Promise<void> {
  const file = checkpointRecordFile(home);
  await fs.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(tmp, `${JSON.stringify({ msgs, ts })}\n`);
  await fs.rename(tmp, file);
}

/** How the agent hooks behave: the two tool settings plus `auto_save`, `save_interval` and `save_budget_s`. */
export interface HookBehaviour extends HookSettings {
  /** false turns the saving hooks off (`hooks.auto_save`, env MEMPALACE_HOOKS_AUTO_SAVE). */
  auto_save: boolean;
  /** Human messages between two stop-hook saves (`hooks.save_interval`, default 15). */
  save_interval: number;
  /** Seconds from a hook process's start after which a save the host waits for starts no new batch (`hooks.save_budget_s`). */
  save_budget_s: number;
}

export const DEFAULT_SAVE_INTERVAL = 15;
/**
 * Under the host's cut-off with room to spare: `hooks install` gives Stop 60 s (host defaults
 * differ by version), and a host was seen cutting a save at 25 s; process start, the model load
 * and the diary write come on top of the filing.
 */
export const DEFAULT_SAVE_BUDGET_S = 15;

/** The hook behaviour as stored (defaults where unset); an unreadable file gives the defaults. */
export async function readHookBehaviour(home: string, env: NodeJS.ProcessEnv = process.env): Promise<HookBehaviour> {
  let config: Record<string, unknown> = {};
  try {
    config = await readConfig(path.join(home, 'config.json'));
  } catch {
    // The hooks never fail the host on a broken configuration; the defaults apply.
  }
  const hooks = typeof config.hooks === 'object' && config.hooks !== null ? (config.hooks as Record<string, unknown>) : {};
  const envAuto = env.MEMPALACE_HOOKS_AUTO_SAVE?.trim().toLowerCase();
  const auto = envAuto === undefined || envAuto === ''
    ? (typeof hooks.auto_save === 'boolean' ? hooks.auto_save : true)
    : !['0', 'false', 'no', 'off'].includes(envAuto);
  const interval = hooks.save_interval;
  const budget = hooks.save_budget_s;
  return {
    ...settingsOf(config),
    auto_save: auto,
    save_interval: typeof interval === 'number' && Number.isInteger(interval) && interval >= 1 ? interval : DEFAULT_SAVE_INTERVAL,
    save_budget_s: typeof budget === 'number' && Number.isFinite(budget) && budget > 0 ? budget : DEFAULT_SAVE_BUDGET_S,
  };
}

export async function memoriesFiledAway(home: string) {
  const file = checkpointRecordFile(home);
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch {
    return { status: 'quiet' as const, message: 'No recent journal entry', count: 0, timestamp: null };
  }
  // The record is consumed on both branches, so an acknowledgement is shown once.
  await fs.rm(file, { force: true });
  try {
    const record = JSON.parse(text) as { msgs?: unknown; ts?: unknown };
    const count = typeof record.msgs === 'number' && Number.isFinite(record.msgs) ? Math.trunc(record.msgs) : Number.NaN;
    if (Number.isNaN(count)) throw new Error('msgs is not a number');
    const timestamp = typeof record.ts === 'string' ? record.ts : null;
    return { status: 'ok' as const, message: `✦ ${count} messages tucked into drawers`, count, timestamp };
  } catch {
    return { status: 'error' as const, message: '✦ Journal entry filed in the palace', count: 0, timestamp: null };
  }
}
