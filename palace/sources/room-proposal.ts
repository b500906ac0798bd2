/**
 * The rooms `init` proposes for a project directory (docs/palace-behaviour.md §4.6.1): its folder
 * names, falling back to its file names, listed here and judged by core/rooms.ts.
 */
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { RoomConfig } from '../../core/project-config.js';
import { FILENAME_PROPOSAL_SKIP_DIRS, proposeRoomsFromFileNames, proposeRoomsFromFolders } from '../../core/rooms.js';
import { compareCodePoints } from '../../core/scan.js';

async function subdirectories(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name).sort(compareCodePoints);
  } catch {
    return [];
  }
}

async function* fileNamesUnder(dir: string): AsyncGenerator<string> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const d of entries.sort((a, b) => compareCodePoints(a.name, b.name))) {
    if (d.isDirectory()) {
      if (!FILENAME_PROPOSAL_SKIP_DIRS.has(d.name)) yield* fileNamesUnder(join(dir, d.name));
    } else if (d.isFile()) {
      yield d.name;
    }
  }
}

/** docs/palace-behaviour.md §4.6.1 over a project directory: folder proposals, falling back to file names. */
export async function proposeRooms(projectDir: string): Promise<RoomConfig[]> {
  const topNames = await subdirectories(projectDir);
  const topLevel = await Promise.all(topNames.map(async (name) => ({ name, children: await subdirectories(join(projectDir, name)) })));
  const fromFolders = proposeRoomsFromFolders(topLevel);
  if (fromFolders.length > 1) return fromFolders;
  const names: string[] = [];
  for await (const name of fileNamesUnder(projectDir)) names.push(name);
  return proposeRoomsFromFileNames(names);
}
