import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PalaceError } from '../../core/errors.js';
import { parseProjectConfig } from '../../core/project-config.js';
import { loadProjectConfig } from '../../palace/sources/project-config.js';

let base: string;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'mp-config-'));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

async function project(name: string, files: Record<string, string>): Promise<string> {
  const dir = join(base, name);
  await mkdir(dir, { recursive: true });
  for (const [f, text] of Object.entries(files)) await writeFile(join(dir, f), text);
  return dir;
}

async function errorOf(p: Promise<unknown>): Promise<PalaceError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof PalaceError) return e;
    throw e;
  }
  throw new Error('expected a PalaceError');
}

describe('project configuration (docs/palace-behaviour.md §4.1)', () => {
  it('reads wing and rooms from mempalace.yaml', async () => {
    const dir = await project('with-config', {
      'mempalace.yaml':
        'wing: my_project\nrooms:\n  - name: frontend\n    description: Files from frontend/\n    keywords: [frontend, client]\n  - name: general\n    description: Other\n    keywords: []\n',
    });
    const cfg = await loadProjectConfig(dir);
    expect(cfg.wing).toBe('my_project');
    expect(cfg.rooms).toEqual([
      { name: 'frontend', description: 'Files from frontend/', keywords: ['frontend', 'client'] },
      { name: 'general', description: 'Other', keywords: [] },
    ]);
    expect(cfg.configFile).toBe(join(dir, 'mempalace.yaml'));
  });

  it('falls back to mempal.yaml, and a file without rooms gets general without keywords', async () => {
    const dir = await project('fallback', { 'mempal.yaml': 'wing: other\n' });
    const cfg = await loadProjectConfig(dir);
    expect(cfg.wing).toBe('other');
    expect(cfg.rooms).toEqual([{ name: 'general', description: 'All project files', keywords: [] }]);
  });

  it('without a file: slug of the directory name, general with keyword, and a warning', async () => {
    const dir = await project('My Cool-Project', {});
    const cfg = await loadProjectConfig(dir);
    expect(cfg.wing).toBe('my_cool_project');
    expect(cfg.rooms).toEqual([{ name: 'general', description: 'All project files', keywords: ['general'] }]);
    expect(cfg.configFile).toBeNull();
    expect(cfg.warnings[0]).toContain('same name share');
  });

  it('the wing override replaces the configured wing', async () => {
    const dir = await project('override', { 'mempalace.yaml': 'wing: configured\n' });
    expect((await loadProjectConfig(dir, 'chosen')).wing).toBe('chosen');
  });

  it('rejects invalid names naming the file and the key', async () => {
    const dir = await project('bad-room', { 'mempalace.yaml': 'wing: ok\nrooms:\n  - name: good\n  - name: ../etc\n' });
    const e = await errorOf(loadProjectConfig(dir));
    expect(e.code).toBe('invalid_argument');
    expect(e.field).toBe('rooms[1].name');
    expect(e.rule).toBe('path_characters');
    expect(e.message).toContain(join(dir, 'mempalace.yaml'));
    expect(e.message).toContain('rooms[1].name');

    const badWing = await errorOf(loadProjectConfig(await project('bad-wing', { 'mempalace.yaml': 'wing: _hidden\n' })));
    expect(badWing.field).toBe('wing');
    expect(badWing.message).toContain('mempalace.yaml');
  });

  it('rejects malformed structure and YAML with the file named', () => {
    expect(() => parseProjectConfig('wing: [unclosed', '/p/mempalace.yaml', '/p')).toThrow(/\/p\/mempalace\.yaml: not valid YAML/);
    expect(() => parseProjectConfig('rooms: frontend', '/p/mempalace.yaml', '/p')).toThrow(/rooms must be a list/);
    expect(() => parseProjectConfig('rooms:\n  - name: a\n    keywords: x', '/p/mempalace.yaml', '/p')).toThrow(/rooms\[0\]\.keywords must be a list/);
    expect(() => parseProjectConfig('rooms:\n  - a\n  - a', '/p/mempalace.yaml', '/p')).toThrow(/rooms\[1\]\.name repeats/);
    expect(parseProjectConfig('rooms:\n  - backend', '/p/mempalace.yaml', '/p').rooms).toEqual([{ name: 'backend', description: '', keywords: [] }]);
  });

  it('a directory name that is not a valid wing asks for an explicit wing', async () => {
    const dir = await project('.dotfiles', {});
    const e = await errorOf(loadProjectConfig(dir));
    expect(e.field).toBe('wing');
    expect(e.message).toContain('give a wing explicitly');
    expect((await loadProjectConfig(dir, 'dotfiles')).wing).toBe('dotfiles');
  });
});
