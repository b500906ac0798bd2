/**
 * `mempalace hooks install` on real settings files: it merges its handlers into Claude Code's
 * settings.json and Codex's hooks.json, keeps every unrelated entry (other hooks on the same
 * events, other events, other settings), backs the file up, changes nothing the second time, and
 * `--uninstall` gives back exactly the original settings. A file that is not JSON is refused
 * untouched. The file keeps its mode (a 0600 file holding an API key, and its backup, stay 0600), a
 * symlinked settings file stays a link with its target rewritten, and the palace path is quoted
 * so the host's `sh -c` never expands it.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hookBin, hookCommand, installHooks, withOwnHooks } from '../../cli/host-settings.js';
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

describe.each([['claude-code', ['SessionStart', 'Stop', 'PreCompact', 'SessionEnd']], ['codex', ['SessionStart', 'Stop', 'PreCompact']]] as const)(
  '%s settings',
  (harness, events) => {
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
        expect(ours).toEqual([
          expect.objectContaining({ type: 'command',
            command: `mempalace hook run --hook ${
              event === 'SessionStart' ? 'session-start' : event === 'Stop' ? 'stop' : event === 'PreCompact' ? 'precompact' : 'session-end'
            } --harness ${harness}` }),
        ]);
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
      const commands = Object.values(twice.hooks as Record<string, { hooks: { command: string }[] }[]>).flat().flatMap((g) => g.hooks).map((h) => h.command)
        .filter((c) => c.includes('hook run'));
      expect(commands).toHaveLength(events.length);
      expect(commands.every((c) => c.startsWith('node /opt/mempalace/dist/cli/main.js hook run'))).toBe(true);
    });

    it('uninstall removes exactly its own entries: the original settings come back', async () => {
      const r = await installHooks({ harness, file, bin: 'mempalace', uninstall: true });
      expect(r.changed).toBe(true);
      expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual(unrelated);
      expect((await installHooks({ harness, file, bin: 'mempalace', uninstall: true })).changed).toBe(false);
    });
  },
);

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
  await expect(installHooks({ harness: 'codex', file, bin: 'mempalace', uninstall: false })).rejects.toMatchObject({ code: 'invalid_argument',
    field: 'settings', rule: 'json_object' });
  expect(fs.readFileSync(file, 'utf8')).toBe('{ "hooks": ');
});

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

describe("the settings file's mode and links", () => {
  it('a 0600 settings file holding an API key stays 0600 after install and uninstall, and so does its backup', async () => {
    const file = path.join(dir, 'private', 'settings.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `${JSON.stringify({ env: { ANTHROPIC_API_KEY: 'sk-test-secret' } }, null, 2)}\n`, { mode: 0o600 });
    fs.chmodSync(file, 0o600);
    await installHooks({ harness: 'claude-code', file, bin: 'mempalace', uninstall: false });
    expect(modeOf(file)).toBe(0o600);
    expect(modeOf(`${file}.mempalace.bak`)).toBe(0o600);
    await installHooks({ harness: 'claude-code', file, bin: 'mempalace', uninstall: true });
    expect(modeOf(file)).toBe(0o600);
    expect(modeOf(`${file}.mempalace.bak`)).toBe(0o600);
    expect(fs.readdirSync(path.dirname(file)).sort()).toEqual(['settings.json', 'settings.json.mempalace.bak']);
  });

  it('a new settings file is created readable by its owner only', async () => {
    const file = path.join(dir, 'new-private', 'settings.json');
    await installHooks({ harness: 'codex', file, bin: 'mempalace', uninstall: false });
    expect(modeOf(file)).toBe(0o600);
  });

  it('a symlinked settings file stays a link: its target is rewritten in place, keeping its mode', async () => {
    const target = path.join(dir, 'dotfiles', 'claude-settings.json');
    const link = path.join(dir, 'linked', '.claude', 'settings.json');
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.writeFileSync(target, '{"model": "opus"}\n', { mode: 0o640 });
    fs.chmodSync(target, 0o640);
    fs.symlinkSync(target, link);
    const r = await installHooks({ harness: 'claude-code', file: link, bin: 'mempalace', uninstall: false });
    expect(r.changed).toBe(true);
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.readlinkSync(link)).toBe(target);
    const installed = JSON.parse(fs.readFileSync(target, 'utf8')) as { model: string; hooks: Record<string, unknown> };
    expect(installed.model).toBe('opus');
    expect(Object.keys(installed.hooks)).toEqual(['SessionStart', 'Stop', 'PreCompact', 'SessionEnd']);
    expect(modeOf(target)).toBe(0o640);
    expect(fs.readFileSync(`${link}.mempalace.bak`, 'utf8')).toBe('{"model": "opus"}\n');
    expect(modeOf(`${link}.mempalace.bak`)).toBe(0o640);
  });

  it('a symlink to nothing is refused, and nothing is created', async () => {
    const link = path.join(dir, 'dangling', 'settings.json');
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.symlinkSync(path.join(dir, 'dangling', 'nowhere', 'settings.json'), link);
    await expect(installHooks({ harness: 'claude-code', file: link, bin: 'mempalace', uninstall: false })).rejects.toMatchObject({ code: 'invalid_argument',
      field: 'settings', rule: 'symlink_target' });
    expect(fs.readdirSync(path.dirname(link))).toEqual(['settings.json']);
    expect(fs.existsSync(path.join(dir, 'dangling', 'nowhere'))).toBe(false);
  });
});

describe('the installed command line', () => {
  it("quotes the palace path, so the host's sh -c passes it literally and runs nothing in it", () => {
    const pwned = path.join(dir, 'pwned-xyz');
    const palace = `${dir}/p $(touch ${pwned}) \`touch ${pwned}\` "dq" it's $HOME *`;
    // printf prints each argument it is given on its own line: exactly what mempalace would receive.
    const line = hookCommand(hookBin("printf '%s\\n'", palace, 'embedded'), 'stop', 'claude-code');
    const r = spawnSync('sh', ['-c', line], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n').slice(0, 4)).toEqual(['--palace', palace, '--profile', 'embedded']);
    expect(fs.existsSync(pwned)).toBe(false);
  });
});
