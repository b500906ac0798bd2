/**
 * `mempalace init <dir>` for a project (docs/palace-behaviour.md §4.1, §4.6.1): propose the wing and the
 * rooms of a project that has no configuration yet and write them to `mempalace.yaml`, so the
 * user can review and edit the rooms before the first mine. An existing configuration is never
 * overwritten; it is read back and reported instead.
 */
import { stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { PalaceError, invalidArgument } from '../../core/errors.js';
import { PROJECT_CONFIG_FILES, wingFromDirectory } from '../../core/project-config.js';
import type { RoomConfig } from '../../core/project-config.js';
import { loadProjectConfig } from './project-config.js';
import { proposeRooms } from './room-proposal.js';
import { validateName } from '../../core/validate.js';

export interface ProjectInit {
  config_file: string;
  /** False when a configuration existed and was kept as it is. */
  written: boolean;
  wing: string;
  rooms: RoomConfig[];
}

function isValidName(name: string): boolean {
  try {
    validateName('room', name);
    return true;
  } catch (e) {
    if (e instanceof PalaceError) return false;
    throw e;
  }
}

export async function initProject(projectDir: string): Promise<ProjectInit> {
  const dir = resolve(projectDir);
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) throw invalidArgument('dir', 'directory', `${dir} is not a directory`);
  const existing = await loadProjectConfig(dir);
  if (existing.configFile !== null) return { config_file: existing.configFile, written: false, wing: existing.wing, rooms: existing.rooms };
  const wing = wingFromDirectory(dir);
  // A folder whose name is not a valid room name (docs/palace-behaviour.md §2.5) is left to the `general` room.
  const rooms = (await proposeRooms(dir)).filter((r) => isValidName(r.name));
  const file = join(dir, PROJECT_CONFIG_FILES[0]);
  const text = `# Proposed by \`mempalace init\`: review the rooms, then run \`mempalace mine ${dir}\`.\n${stringify({ wing, rooms })}`;
  try {
    await writeFile(file, text, { flag: 'wx' });
  } catch (e) {
    // Another init won the race: report what it wrote.
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    const raced = await loadProjectConfig(dir);
    return { config_file: file, written: false, wing: raced.wing, rooms: raced.rooms };
  }
  const written = await loadProjectConfig(dir);
  return { config_file: file, written: true, wing: written.wing, rooms: written.rooms };
}
