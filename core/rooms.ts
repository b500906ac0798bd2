/**
 * Rooms of projects and extract mining: which configured room a file belongs to (docs/palace-behaviour.md
 * §4.6), and the rooms `init` proposes for a project before the first mine (docs/palace-behaviour.md §4.6.1),
 * from the folder and file names palace/sources/room-proposal.ts lists.
 */
import { codePointPrefix } from './chunking.js';
import type { RoomConfig } from './project-config.js';
import { validateName } from './validate.js';

export type RoomRule = Pick<RoomConfig, 'name' | 'keywords'>;

function tokens(s: string): string[] {
  return s.split(/[-_./]+/).filter((t) => t !== '');
}

/** Case-insensitive: equal, or one is a token of the other (`frontend` ~ `frontend-app`). */
export function nameMatches(a: string, b: string): boolean {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x === y || tokens(x).includes(y) || tokens(y).includes(x);
}

function countNonOverlapping(haystack: string, needle: string): number {
  let n = 0;
  for (let i = haystack.indexOf(needle); i >= 0; i = haystack.indexOf(needle, i + needle.length)) n++;
  return n;
}

/**
 * docs/palace-behaviour.md §4.6 `detect_room`: folder match (every directory component top-down, room names and keywords),
 * then file stem against room names, then keyword counts in the first 2,000 code points.
 * `relativePath` is the file's POSIX path relative to the project root.
 */
export function detectRoom(relativePath: string, text: string, rooms: readonly RoomRule[]): string {
  const rel = relativePath.toLowerCase();
  const parts = rel.split('/').filter((p) => p !== '');
  const fileName = parts.at(-1) ?? '';
  const dot = fileName.lastIndexOf('.');
  const stem = dot > 0 ? fileName.slice(0, dot) : fileName;
  for (const part of parts.slice(0, -1)) {
    for (const room of rooms) {
      for (const cand of [room.name, ...room.keywords]) {
        if (cand !== '' && nameMatches(part, cand)) return room.name;
      }
    }
  }
  for (const room of rooms) if (nameMatches(stem, room.name)) return room.name;
  const head = codePointPrefix(text, 2000).toLowerCase();
  let best: RoomRule | undefined;
  let bestScore = 0;
  for (const room of rooms) {
    let score = 0;
    // [QUIRK] fix: an empty keyword would count every position; it is ignored.
    for (const kw of [...room.keywords, room.name]) if (kw !== '') score += countNonOverlapping(head, kw.toLowerCase());
    if (score > bestScore) {
      best = room;
      bestScore = score;
    }
  }
  return best ? best.name : 'general';
}

/** Folder names (keys: lowercase, `-` → `_`) and the room each proposes (docs/palace-behaviour.md §4.6.1). */
export const FOLDER_ROOMS: Readonly<Record<string, string>> = Object.fromEntries([
  ...['frontend', 'front-end', 'front_end', 'client', 'ui', 'views', 'components', 'pages'].map((k) => [k, 'frontend']),
  ...['backend', 'back-end', 'back_end', 'server', 'api', 'routes', 'services', 'controllers', 'models', 'database', 'db'].map((k) => [k, 'backend']),
  ...['docs', 'doc', 'documentation', 'wiki', 'readme', 'notes'].map((k) => [k, 'documentation']),
  ...['design', 'designs', 'mockups', 'wireframes', 'assets', 'storyboard'].map((k) => [k, 'design']),
  ...['costs', 'cost', 'budget', 'finance', 'financial', 'pricing', 'invoices', 'accounting'].map((k) => [k, 'costs']),
  ...['meetings', 'meeting', 'calls', 'meeting_notes', 'standup', 'minutes'].map((k) => [k, 'meetings']),
  ...['team', 'staff', 'hr', 'hiring', 'employees', 'people'].map((k) => [k, 'team']),
  ...['research', 'references', 'reading', 'papers'].map((k) => [k, 'research']),
  ...['planning', 'roadmap', 'strategy', 'specs', 'requirements'].map((k) => [k, 'planning']),
  ...['tests', 'test', 'testing', 'qa'].map((k) => [k, 'testing']),
  ...['scripts', 'tools', 'utils'].map((k) => [k, 'scripts']),
  ...['config', 'configs', 'settings', 'infrastructure', 'infra', 'deploy'].map((k) => [k, 'configuration']),
].map(([k, room]) => [k!.replace(/-/g, '_'), room!]));

/** Directories `init` does not look into when proposing rooms from folders. */
export const PROPOSAL_SKIP_DIRS: ReadonlySet<string> = new Set(['.git', 'node_modules', '__pycache__', '.venv', 'venv', 'env', 'dist', 'build', '.next',
  'coverage']);
/** Directories skipped when proposing rooms from file names. */
export const FILENAME_PROPOSAL_SKIP_DIRS: ReadonlySet<string> = new Set(['.git', 'node_modules', '__pycache__', '.venv', 'venv', 'dist', 'build']);

export interface TopLevelDir {
  name: string;
  /** Names of its subdirectories. */
  children: readonly string[];
}

function isValidRoomName(name: string): boolean {
  try {
    validateName('room', name);
    return true;
  } catch {
    return false;
  }
}

/**
 * docs/palace-behaviour.md §4.6.1 step 1: rooms from top-level folder names, then mapped second-level names; first
 * proposal per room wins; `general` is appended. Names that would not pass room validation are
 * not proposed (the config loader would reject them).
 */
export function proposeRoomsFromFolders(topLevel: readonly TopLevelDir[]): RoomConfig[] {
  const rooms: RoomConfig[] = [];
  const seen = new Set<string>();
  const propose = (room: string, original: string) => {
    if (seen.has(room) || !isValidRoomName(room)) return;
    seen.add(room);
    rooms.push({ name: room, description: `Files from ${original}/`, keywords: [room, original.toLowerCase()] });
  };
  const top = topLevel.filter((d) => !PROPOSAL_SKIP_DIRS.has(d.name));
  for (const d of top) {
    const mapped = FOLDER_ROOMS[d.name.toLowerCase().replace(/-/g, '_')];
    if (mapped !== undefined) propose(mapped, d.name);
    else if (Array.from(d.name).length > 2 && /^\p{L}/u.test(d.name)) propose(d.name.toLowerCase().replace(/[- ]/g, '_'), d.name);
  }
  for (const d of top) {
    for (const child of d.children) {
      const mapped = FOLDER_ROOMS[child.toLowerCase().replace(/-/g, '_')];
      if (mapped !== undefined) propose(mapped, child);
    }
  }
  if (!seen.has('general')) rooms.push({ name: 'general', description: "Files that don't fit other rooms", keywords: [] });
  return rooms;
}

/**
 * docs/palace-behaviour.md §4.6.1 step 2: one hit per map keyword contained in a lowercased file name (`-` and space →
 * `_`); rooms with at least two hits, most first, at most six; else a single `general`.
 */
export function proposeRoomsFromFileNames(fileNames: Iterable<string>): RoomConfig[] {
  const hits = new Map<string, number>();
  for (const fileName of fileNames) {
    const lowered = fileName.toLowerCase().replace(/[- ]/g, '_');
    for (const [keyword, room] of Object.entries(FOLDER_ROOMS)) {
      if (lowered.includes(keyword)) hits.set(room, (hits.get(room) ?? 0) + 1);
    }
  }
  const rooms = [...hits.entries()]
    .filter(([, n]) => n >= 2)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([room]) => ({ name: room, description: `Files about ${room}`, keywords: [room] }));
  return rooms.length > 0 ? rooms : [{ name: 'general', description: 'All project files', keywords: [] }];
}
