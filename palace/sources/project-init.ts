/**
 * `mempalace init <dir>` for a project (docs/palace-behaviour.md §4.1, §4.6.1): propose the wing and the
 * rooms of a project that has no configuration yet and write them to `mempalace.yaml`, so the
 * user can review and edit the rooms before the first mine. An existing configuration is never
 * overwritten; it is read back and reported instead. It also proposes the people and projects
 * the directory names (docs/palace-behaviour.md §7.1), added to the entity registry when confirmed.
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
import type { EntityProposal } from '../../core/entities.js';
import { discoverEntities } from './entity-discovery.js';
import { confirmEntities, type ConfirmedEntities } from './entity-registry.js';

export interface ProjectInit {
  config_file: string;
  /** False when a configuration existed and was kept as it is. */
  written: boolean;
  wing: string;
  rooms: RoomConfig[];
  /** People and projects found in the directory (docs/palace-behaviour.md §7.1), strongest first. */
  entities: EntityProposal[];
  /** What went into the entity registry, when the proposals were confirmed. */
  confirmed?: ConfirmedEntities;
}

export interface EntityOptions {
  languages: readonly string[];
  registryFile: string;
  /** Add the proposals to the registry (`mempalace init --yes`); otherwise they are only reported. */
  confirm: boolean;
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

export async function initProject(projectDir: string, entityOptions: EntityOptions): Promise<ProjectInit> {
  const rooms = await initRooms(projectDir);
  const entities = await discoverEntities(rooms.dir, entityOptions.languages);
  const confirmed = entityOptions.confirm ? await confirmEntities(entityOptions.registryFile, rooms.wing, entities) : undefined;
  return { config_file: rooms.config_file, written: rooms.written, wing: rooms.wing, rooms: rooms.rooms, entities, ...(confirmed ? { confirmed } : {}) };
}

type RoomsInit = Omit<ProjectInit, 'entities' | 'confirmed'> & { dir: string };

async function initRooms(projectDir: string): Promise<RoomsInit> {
  const dir = resolve(projectDir);
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) throw invalidArgument('dir', 'directory', `${dir} is not a directory`);
  const existing = await loadProjectConfig(dir);
  if (existing.configFile !== null) return { dir, config_file: existing.configFile, written: false, wing: existing.wing, rooms: existing.rooms };
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
    return { dir, config_file: file, written: false, wing: raced.wing, rooms: raced.rooms };
  }
  const written = await loadProjectConfig(dir);
  return { dir, config_file: file, written: true, wing: written.wing, rooms: written.rooms };
}
