/**
 * `mempalace hooks install` on real settings files: it merges its handlers into Claude Code's
 * settings.json and Codex's hooks.json, keeps every unrelated entry (other hooks on the same
 * events, other events, other settings), backs the file up, changes nothing the second time, and
 * `--uninstall` gives back exactly the original settings. A file that is not JSON is refused
 * untouched.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { installHooks, withOwnHooks } from '../../cli/host-settings.js';
import { makeTempDir, removeDir } from '../helpers/tmp.js';

const dir = makeTempDir('mempalace-host-settings-');
afterAll(() => removeDir(dir));

const unrelated = {
  model: 'sonnet',
  permissions: { allow: ['Bash(npm test:*)'], deny: [] },
  hooks: {
    Stop: [{ hooks: [{ type: 'command', command: 'notify-done.sh', timeout: 5 }] }],
    PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'guard-bash.sh' }] }],
    SessionStart: [{ matcher: 'startup', hooks: [{ type: 'command', command: 'echo hello' }, { type: 'command', command: 'load-env.sh' }] }],
  },
};

describe.each([['claude-code', ['SessionStart', 'Stop', 'PreCompact', 'SessionEnd']], ['codex', ['SessionStart', 'Stop', 'PreCompact']]] as const)('%s settings', (harness, events) => {
  const file = path.join(dir, harness, 'settings.json');
  const original = `${JSON.stringify(unrelated, null, 2)}\n`;

  it('install merges its entries, keeps the unrelated ones and backs the file up', async () => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, original);
    const r = await installHooks({ harness, file, bin: 'mempalace', uninstall: false });
    expect(r).toMatchObject({ changed: true, backup: `${file}.mempalace.bak`, events: [...events] });
    expect(fs.readFileSync(`${file}.mempalace.bak`, 'utf8')).toBe(original);
    const installed = JSON.parse(fs.readFileSync(file, 'utf8')) as typeof unrelated & { hooks: Record<string, { hooks: { command: string }[] }[]> };
    expect(installed.model).toBe('sonnet');
    expect(installed.permissions).toEqual(unrelated.permissions);
    expect(installed.hooks.PreToolUse).toEqual(unrelated.hooks.PreToolUse);
    expect(installed.hooks.Stop![0]).toEqual(unrelated.hooks.Stop[0]);
    expect(installed.hooks.SessionStart![0]).toEqual(unrelated.hooks.SessionStart[0]);
    for (const event of events) {
      const ours = installed.hooks[event]!.flatMap((g) => g.hooks).filter((h) => h.command.includes('hook run'));
      expect(ours).toEqual([expect.objectContaining({ type: 'command', command: `mempalace hook run --hook ${event === 'SessionStart' ? 'session-start' : event === 'Stop' ? 'stop' : event === 'PreCompact' ? 'precompact' : 'session-end'} --harness ${harness}` })]);
    }
  });

  it('a second install changes nothing', async () => {
    const before = fs.readFileSync(file, 'utf8');
    const r = await installHooks({ harness, file, bin: 'mempalace', uninstall: false });
    expect(r.changed).toBe(false);
    expect(fs.readFileSync(file, 'utf8')).toBe(before);
  });

  it('installing with another command replaces its own entries instead of adding more', () => {
    const once = withOwnHooks(unrelated, harness, 'mempalace');
    const twice = withOwnHooks(once, harness, 'node /opt/mempalace/dist/cli/main.js');
    const commands = Object.values(twice.hooks as Record<string, { hooks: { command: string }[] }[]>).flat().flatMap((g) => g.hooks).map((h) => h.command).filter((c) => c.includes('hook run'));
    expect(commands).toHaveLength(events.length);
    expect(commands.every((c) => c.startsWith('node /opt/mempalace/dist/cli/main.js hook run'))).toBe(true);
  });

  it('uninstall removes exactly its own entries: the original settings come back', async () => {
    const r = await installHooks({ harness, file, bin: 'mempalace', uninstall: true });
    expect(r.changed).toBe(true);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual(unrelated);
    expect((await installHooks({ harness, file, bin: 'mempalace', uninstall: true })).changed).toBe(false);
  });
});

it('a settings file that does not exist is created, and uninstall leaves no hooks key behind', async () => {
  const file = path.join(dir, 'fresh', '.claude', 'settings.json');
  const r = await installHooks({ harness: 'claude-code', file, bin: 'mempalace', uninstall: false });
  expect(r).toMatchObject({ changed: true, backup: null });
  await installHooks({ harness: 'claude-code', file, bin: 'mempalace', uninstall: true });
  expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({});
});

it('a settings file that is not JSON is refused and left untouched', async () => {
  const file = path.join(dir, 'broken.json');
  fs.writeFileSync(file, '{ "hooks": ');
  await expect(installHooks({ harness: 'codex', file, bin: 'mempalace', uninstall: false })).rejects.toMatchObject({ code: 'invalid_argument', field: 'settings', rule: 'json_object' });
  expect(fs.readFileSync(file, 'utf8')).toBe('{ "hooks": ');
});
