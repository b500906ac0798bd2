/**
 * The `mempalace` command as a user runs it (a child process per command, embedded profile):
 * `init <dir>` proposes the project's wing and rooms in mempalace.yaml and never overwrites one,
 * `mine` files drawers into those rooms, `search` finds them, and bad input exits 2 with a
 * structured error, creating nothing.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadProjectConfig } from '../../palace/sources/project-config.js';
import { embeddedJsonCli } from '../helpers/cli.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mempalace-cli-'));
const palace = path.join(tmp, 'palace');

const mempalace = embeddedJsonCli(palace, { MEMPALACE_ENTITY_REGISTRY: path.join(tmp, 'none.json') });

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('mempalace init, mine, search', () => {
  const project = path.join(tmp, 'Harbour-Ops');
  for (const [dir, file, text] of [
    ['frontend', 'tide-chart.tsx', 'The tide chart component draws high and low water for the next seven days.'],
    ['backend', 'berths.py', 'The berth allocation service assigns arriving ships to free berths by draught.'],
    ['docs', 'storms.md', 'Storm procedure: close the outer gate when the wind passes force nine.'],
  ] as const) {
    fs.mkdirSync(path.join(project, dir), { recursive: true });
    fs.writeFileSync(path.join(project, dir, file), `${text}\n`.repeat(4));
  }

  it('refuses a missing project directory with exit code 2, naming the field, and creates no palace', () => {
    const res = mempalace('init', path.join(tmp, 'absent'));
    expect(res.code).toBe(2);
    expect(res.json).toMatchObject({ code: 'invalid_argument', field: 'dir', rule: 'directory' });
    expect(fs.existsSync(palace)).toBe(false);
  });

  it('refuses a mine into a wing that breaks the name rule with exit code 2, naming the field and rule, and creates no palace', () => {
    const res = mempalace('mine', project, '--wing', 'a/b');
    expect(res.code).toBe(2);
    expect(res.json).toMatchObject({ code: 'invalid_argument', field: 'wing', rule: 'path_characters' });
    expect(fs.existsSync(palace)).toBe(false);
  });

  it('init proposes the wing and rooms in mempalace.yaml, and a second init keeps the file', async () => {
    const first = mempalace('init', project);
    expect(first.code).toBe(0);
    const file = path.join(project, 'mempalace.yaml');
    expect(first.json).toMatchObject({ success: true, profile: 'embedded', total_drawers: 0,
      project: { config_file: file, written: true, wing: 'harbour_ops' } });
    const rooms = (first.json.project as { rooms: { name: string }[] }).rooms.map((r) => r.name);
    expect(rooms.sort()).toEqual(['backend', 'documentation', 'frontend', 'general']);
    const loaded = await loadProjectConfig(project);
    expect(loaded.rooms.map((r) => r.name).sort()).toEqual(rooms);
    const text = fs.readFileSync(file, 'utf8');
    fs.appendFileSync(file, '# edited by the user\n');
    const second = mempalace('init', project);
    expect(second.json).toMatchObject({ project: { written: false, wing: 'harbour_ops' } });
    expect(fs.readFileSync(file, 'utf8')).toBe(`${text}# edited by the user\n`);
  });

  it('mine files each folder into its proposed room, and search finds the drawer', () => {
    const mined = mempalace('mine', project);
    expect(mined.code).toBe(0);
    expect(mined.json).toMatchObject({ state: 'completed', files_mined: 3 });
    const found = mempalace('search', 'when', 'to', 'close', 'the', 'gate', 'in', 'a', 'storm', '--results', '1');
    expect(found.code).toBe(0);
    expect(found.json.results).toMatchObject([{ wing: 'harbour_ops', room: 'documentation', source_file: 'storms.md' }]);
    const backend = mempalace('search', 'ship', 'berth', 'allocation', '--room', 'backend');
    expect(backend.json.results).toMatchObject([{ room: 'backend', source_file: 'berths.py' }]);
  });

  // sync runs through the CLI's tool-call path: a refused input still exits 2 and names its code, as `mine --wing a/b` does.
  it('refuses a sync of a wing that breaks the name rule with exit code 2, naming the field and rule, and starts no job', () => {
    const listed = mempalace('jobs', 'list').json as { count: number; jobs: Record<string, unknown>[] };
    // The mine above, with what it worked on.
    expect(listed.jobs[0]).toMatchObject({ kind: 'mine', source: fs.realpathSync(project), mode: 'projects', trigger: 'user' });
    const before = listed.count;
    const res = mempalace('sync', '--wing', 'a/b', '--apply');
    expect(res.code).toBe(2);
    expect(res.json).toMatchObject({ code: 'invalid_argument', field: 'wing', rule: 'path_characters' });
    expect(mempalace('jobs', 'list').json.count).toBe(before);
  });
});
