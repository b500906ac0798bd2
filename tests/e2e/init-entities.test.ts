/**
 * Entity discovery at `mempalace init <dir>` (docs/palace-behaviour.md §7.1) as a user runs it: the
 * people and projects of a directory's git repositories are proposed and written nowhere; with
 * `--yes` they go to the entity registry, the projects becoming the wing's topics, and mining two
 * wings that share a topic links them by a topic tunnel.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { embeddedJsonCli } from '../helpers/cli.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mempalace-init-entities-'));
const palace = path.join(tmp, 'palace');
const registry = path.join(tmp, 'known_entities.json');

const cli = embeddedJsonCli(palace, { MEMPALACE_ENTITY_REGISTRY: registry });

/** A command that must succeed and print JSON. */
function mempalace(...args: string[]): { code: number | null; json: Record<string, unknown> } {
  const res = cli(...args);
  if (res.code !== 0) throw new Error(`mempalace ${args.join(' ')} exited ${res.code}: ${res.stderr}`);
  return { code: res.code, json: JSON.parse(res.stdout) as Record<string, unknown> };
}

/** A git repository whose manifest names `project`, with commits by the given authors. */
function repository(dir: string, project: string, authors: readonly [name: string, email: string][]): void {
  fs.mkdirSync(path.join(dir, 'src'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: project }));
  execFileSync('git', ['init', '-q', dir]);
  authors.forEach(([name, email], i) => {
    fs.writeFileSync(path.join(dir, 'src', 'index.ts'), `export const revision = ${i};\n`.repeat(4));
    execFileSync('git', ['-C', dir, 'add', '.']);
    execFileSync('git', ['-C', dir, '-c', `user.name=${name}`, '-c', `user.email=${email}`, 'commit', '-qm', `change ${i}`]);
  });
}

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('mempalace init proposes and confirms entities', () => {
  const harbour = path.join(tmp, 'harbour');
  const fleet = path.join(tmp, 'fleet');
  repository(harbour, 'tidewatch', [['Alice Moreau', 'alice@example.org'], ['Alice Moreau', 'alice@example.org'], ['dependabot[bot]', 'bot@example.org']]);
  repository(path.join(fleet, 'core'), 'fleet-core', [['Bob Okafor', 'bob@example.org']]);
  repository(path.join(fleet, 'vendor', 'tidewatch'), 'tidewatch', [['Alice Moreau', 'alice@example.org']]);

  it('proposes the people and projects of the repositories, bots left out, and writes no registry', () => {
    const project = mempalace('init', harbour).json.project as { wing: string; entities: { name: string; kind: string; source: string }[] };
    expect(project.wing).toBe('harbour');
    expect(project.entities).toEqual(expect.arrayContaining([
      expect.objectContaining({ name: 'tidewatch', kind: 'project', source: 'manifest' }),
      expect.objectContaining({ name: 'Alice Moreau', kind: 'person', source: 'git' }),
    ]));
    expect(project.entities.map((e) => e.name)).not.toContain('dependabot[bot]');
    expect(project).not.toHaveProperty('confirmed');
    expect(fs.existsSync(registry)).toBe(false);
  });

  it('with --yes adds them to the registry, the projects as the wing topics, keeping what the registry held', () => {
    fs.writeFileSync(registry, JSON.stringify({ people: ['Carol Diaz'] }));
    const harbourInit = mempalace('init', harbour, '--yes').json.project as { confirmed: { topics: string[] } };
    expect(harbourInit.confirmed.topics).toEqual(['tidewatch']);
    const fleetInit = mempalace('init', fleet, '--yes').json.project as { confirmed: { topics: string[] } };
    expect(fleetInit.confirmed.topics.sort()).toEqual(['fleet-core', 'tidewatch']);
    const held = JSON.parse(fs.readFileSync(registry, 'utf8')) as { people: string[]; projects: string[]; topics_by_wing: Record<string, string[]> };
    expect(held.people).toEqual(['Carol Diaz', 'Alice Moreau', 'Bob Okafor']);
    expect(held.projects.sort()).toEqual(['fleet-core', 'tidewatch']);
    expect(Object.keys(held.topics_by_wing).sort()).toEqual(['fleet', 'harbour']);
  });

  it('mining both wings links them by a tunnel on the shared topic', () => {
    expect(mempalace('mine', harbour).json).toMatchObject({ state: 'completed' });
    expect(mempalace('mine', fleet).json).toMatchObject({ state: 'completed' });
    const tunnels = mempalace('tunnels', 'list', '--wing', 'harbour').json as unknown;
    expect(tunnels).toEqual([
      expect.objectContaining({ source: { wing: 'fleet', room: 'topic:tidewatch' }, target: { wing: 'harbour', room: 'topic:tidewatch' } }),
    ]);
  });
});
