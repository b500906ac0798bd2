/**
 * The project configuration of projects-mode mining (docs/palace-behaviour.md §4.1): `mempalace.yaml`
 * (fallback `mempal.yaml`) in the project root names the wing and the rooms. Names written in the
 * file are validated like tool input (docs/palace-behaviour.md §2.5 [QUIRK]); a bad value fails with the file and key.
 * Reading the file is palace/sources/project-config.ts's part; this one parses what it read.
 */
import { basename, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { PalaceError, invalidArgument } from './errors.js';
import { validateName, wingSlug } from './validate.js';

export const PROJECT_CONFIG_FILES = ['mempalace.yaml', 'mempal.yaml'] as const;

export interface RoomConfig {
  name: string;
  description: string;
  keywords: string[];
}

export interface ProjectConfig {
  wing: string;
  rooms: RoomConfig[];
  /** Absolute path of the file read, or null when the defaults were used. */
  configFile: string | null;
  warnings: string[];
}

function configError(file: string, key: string, rule: string, problem: string): PalaceError {
  return invalidArgument(key, rule, `${file}: ${key} ${problem}`, { file });
}

/** Validate a name from the file, re-labelling the validator's error with the file and key. */
function nameFrom(file: string, key: string, value: unknown): string {
  try {
    return validateName(key, value);
  } catch (e) {
    if (e instanceof PalaceError) throw invalidArgument(key, e.rule ?? 'name', `${file}: ${e.message} (got ${JSON.stringify(value)})`, { file });
    throw e;
  }
}

/** The wing slug of a directory name (docs/palace-behaviour.md §2.5), which must still be a valid wing name. */
export function wingFromDirectory(projectDir: string): string {
  const dir = resolve(projectDir);
  const slug = wingSlug(basename(dir));
  try {
    return validateName('wing', slug);
  } catch (e) {
    if (e instanceof PalaceError) {
      throw invalidArgument('wing', e.rule ?? 'name',
        `the wing derived from the directory name ${JSON.stringify(basename(dir))} is not a valid wing (${e.message}); give a wing explicitly or set one in ${
          PROJECT_CONFIG_FILES[0]
        }`, { directory: dir });
    }
    throw e;
  }
}

function parseRoom(file: string, index: number, raw: unknown): RoomConfig {
  const key = `rooms[${index}]`;
  // A bare string is shorthand for a room with that name.
  if (typeof raw === 'string') return { name: nameFrom(file, `${key}.name`, raw), description: '', keywords: [] };
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw configError(file, key, 'mapping', 'must be a mapping with a name');
  const room = raw as Record<string, unknown>;
  const name = nameFrom(file, `${key}.name`, room.name);
  const description = room.description ?? '';
  if (typeof description !== 'string') throw configError(file, `${key}.description`, 'string', 'must be a string');
  const rawKeywords = room.keywords ?? [];
  if (!Array.isArray(rawKeywords)) throw configError(file, `${key}.keywords`, 'list', 'must be a list of strings');
  const keywords = rawKeywords.map((kw: unknown, k) => {
    if (typeof kw !== 'string' && typeof kw !== 'number') throw configError(file, `${key}.keywords[${k}]`, 'string', 'must be a string');
    return String(kw);
  });
  return { name, description, keywords };
}

/** Parse the text of a project configuration file; `file` labels errors. */
export function parseProjectConfig(text: string, file: string, projectDir: string, wingOverride?: string): ProjectConfig {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw invalidArgument('config', 'yaml', `${file}: not valid YAML: ${e instanceof Error ? e.message : String(e)}`, { file });
  }
  if (doc === null || doc === undefined) doc = {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw configError(file, '(document)', 'mapping', 'must be a mapping with wing and rooms');
  const cfg = doc as Record<string, unknown>;
  const wing = wingOverride !== undefined
    ? validateName('wing', wingOverride)
    : cfg.wing === undefined || cfg.wing === null
    ? wingFromDirectory(projectDir)
    : nameFrom(file, 'wing', typeof cfg.wing === 'number' ? String(cfg.wing) : cfg.wing);
  let rooms: RoomConfig[];
  if (cfg.rooms === undefined || cfg.rooms === null) {
    rooms = [{ name: 'general', description: 'All project files', keywords: [] }];
  } else {
    if (!Array.isArray(cfg.rooms)) throw configError(file, 'rooms', 'list', 'must be a list of rooms');
    rooms = cfg.rooms.map((r: unknown, i) => parseRoom(file, i, r));
    const seen = new Set<string>();
    rooms.forEach((r, i) => {
      if (seen.has(r.name)) throw configError(file, `rooms[${i}].name`, 'unique', `repeats the room name ${JSON.stringify(r.name)}`);
      seen.add(r.name);
    });
  }
  return { wing, rooms, configFile: file, warnings: [] };
}
