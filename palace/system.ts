/**
 * The auto-save hook's two tools (mcp-tools §7.1, §7.2). Both live in the user's MemPalace home
 * (`~/.mempalace`): hook settings under `hooks` in config.json, the save hook's last record in
 * hook_state/last_checkpoint.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

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

export async function hookSettings(home: string, input: { silent_save?: unknown; desktop_toast?: unknown }) {
  const file = path.join(home, 'config.json');
  try {
    const config = await readConfig(file);
    const updated: string[] = [];
    const hooks = typeof config.hooks === 'object' && config.hooks !== null ? { ...(config.hooks as Record<string, unknown>) } : {};
    for (const key of ['silent_save', 'desktop_toast'] as const) {
      const value = input[key];
      if (typeof value !== 'boolean') continue;
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

export async function memoriesFiledAway(home: string) {
  const file = path.join(home, 'hook_state', 'last_checkpoint');
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
