import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectRoom, nameMatches, proposeRoomsFromFileNames, proposeRoomsFromFolders } from '../../core/rooms.js';
import { proposeRooms } from '../../palace/sources/room-proposal.js';

const rooms = [
  { name: 'frontend', keywords: ['frontend', 'client'] },
  { name: 'backend', keywords: ['server', 'api'] },
  { name: 'views', keywords: [] },
  { name: 'general', keywords: [] },
];

describe('detectRoom (docs/palace-behaviour.md §4.6)', () => {
  it('matches folder components against names and keywords, by token', () => {
    expect(detectRoom('frontend-app/src/index.ts', '', rooms)).toBe('frontend');
    expect(detectRoom('packages/Client/x.ts', '', rooms)).toBe('frontend');
    expect(detectRoom('interviews/notes.md', '', rooms)).toBe('general');
    expect(nameMatches('interviews', 'views')).toBe(false);
    expect(nameMatches('my.server_v2', 'server')).toBe(true);
    expect(nameMatches('api', 'rest-api-docs')).toBe(true);
  });

  it('checks folders top-down before the file name, and the file stem only against room names', () => {
    expect(detectRoom('server/frontend.md', '', rooms)).toBe('backend');
    expect(detectRoom('src/views.tsx', '', rooms)).toBe('views');
    expect(detectRoom('src/client.ts', '', rooms)).toBe('general');
  });

  it('scores keywords in the first 2,000 code points; first room wins ties; none gives general', () => {
    expect(detectRoom('a.md', 'The API server talks to the API.', rooms)).toBe('backend');
    expect(detectRoom('a.md', 'frontend and server', rooms)).toBe('frontend');
    expect(detectRoom('a.md', 'nothing relevant', rooms)).toBe('general');
    expect(detectRoom('a.md', `${'😀'.repeat(2000)} server server`, rooms)).toBe('general');
    expect(detectRoom('a.md', 'apiapiapi', [{ name: 'x', keywords: ['apia'] }, { name: 'y', keywords: ['api'] }])).toBe('y');
  });

  it('ignores empty keywords instead of scoring every position', () => {
    expect(detectRoom('a.md', 'some text', [{ name: 'odd', keywords: [''] }])).toBe('general');
  });
});

describe('room proposal at init (docs/palace-behaviour.md §4.6.1)', () => {
  it('maps known folders, names other folders, looks one level deeper, and appends general', () => {
    const got = proposeRoomsFromFolders([
      { name: 'Front-End', children: [] },
      { name: 'node_modules', children: ['docs'] },
      { name: 'src', children: ['api', 'tests', 'ui'] },
      { name: 'ab', children: [] },
      { name: '1st', children: [] },
      { name: 'client', children: [] },
      { name: 'My Stuff', children: [] },
    ]);
    expect(got).toEqual([
      { name: 'frontend', description: 'Files from Front-End/', keywords: ['frontend', 'front-end'] },
      { name: 'src', description: 'Files from src/', keywords: ['src', 'src'] },
      { name: 'my_stuff', description: 'Files from My Stuff/', keywords: ['my_stuff', 'my stuff'] },
      { name: 'backend', description: 'Files from api/', keywords: ['backend', 'api'] },
      { name: 'testing', description: 'Files from tests/', keywords: ['testing', 'tests'] },
      { name: 'general', description: "Files that don't fit other rooms", keywords: [] },
    ]);
  });

  it('falls back to file names: rooms with at least two hits, most first, at most six', () => {
    expect(proposeRoomsFromFileNames(['api-client.ts', 'api_routes.py', 'meeting notes.md', 'README.md', 'docs.md', 'test_x.py'])).toEqual([
      // documentation: notes, readme, docs and doc (4); backend: api twice and routes (3).
      { name: 'documentation', description: 'Files about documentation', keywords: ['documentation'] },
      { name: 'backend', description: 'Files about backend', keywords: ['backend'] },
      { name: 'meetings', description: 'Files about meetings', keywords: ['meetings'] },
    ]);
    expect(proposeRoomsFromFileNames(['a.txt'])).toEqual([{ name: 'general', description: 'All project files', keywords: [] }]);
  });

  describe('over a directory', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'mp-rooms-'));
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('uses folders when there are any, else file names', async () => {
      await mkdir(join(dir, 'flat', 'build'), { recursive: true });
      for (const f of ['budget-2024.csv', 'pricing.md', 'standup-1.md', 'standup-2.md']) await writeFile(join(dir, 'flat', f), 'x');
      await writeFile(join(dir, 'flat', 'build', 'cost-a.txt'), 'x');
      expect((await proposeRooms(join(dir, 'flat'))).map((r) => r.name)).toEqual(['costs', 'meetings']);
      await mkdir(join(dir, 'tree', 'docs'), { recursive: true });
      expect((await proposeRooms(join(dir, 'tree'))).map((r) => r.name)).toEqual(['documentation', 'general']);
    });
  });
});
