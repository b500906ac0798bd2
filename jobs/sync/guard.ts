/**
 * The sync guard (issue 24 D1): before a sync deletes anything, each source root of each wing is
 * checked twice. Is the root still the filesystem object it was mined from (jobs/source/
 * root-identity.ts)? An unmounted volume leaves a bare mount point at the same path, and a
 * placeholder there with a mined file's name is a "witness" that turns every other file into
 * `missing`. And would the sync delete most of the source? A sync that finds either stops: its
 * report says why, and an apply needs `force`.
 */
import type { FileState } from '../../stores/ports/drawers/file-states.js';
import type { SyncGuard, SyncGuardReason } from './types.js';
import type { SourceRootIdentity } from '../source/root-identity.js';
import { currentRootIdentity, recordedRootIdentity, sameRootIdentity } from '../source/root-identity.js';

/** A sync deleting more than this share of a source's drawers, from at least MASS_DELETION_MIN_FILES files, stops. */
export const MASS_DELETION_SHARE = 0.5;
/** Fewer files than this are never a mass deletion (deleting 2 of a 3-file source is ordinary). */
export const MASS_DELETION_MIN_FILES = 5;

export interface GuardedSource {
  wing: string;
  source_file: string;
  drawers: number;
  removable: boolean;
  /** The project root the sync classified it under (used when its mine recorded no root). */
  root: string;
  state: FileState | undefined;
}

interface Group {
  wing: string;
  root: string;
  drawers: number;
  removableDrawers: number;
  removableFiles: number;
  recorded: SourceRootIdentity[];
}

function groupsOf(sources: GuardedSource[]): Group[] {
  const groups = new Map<string, Group>();
  for (const s of sources) {
    const recorded = recordedRootIdentity(s.state);
    const root = recorded?.root ?? s.root;
    const key = `${s.wing}\0${root}`;
    let g = groups.get(key);
    if (!g) groups.set(key, g = { wing: s.wing, root, drawers: 0, removableDrawers: 0, removableFiles: 0, recorded: [] });
    g.drawers += s.drawers;
    if (s.removable) {
      g.removableDrawers += s.drawers;
      g.removableFiles++;
    }
    if (recorded && !g.recorded.some((r) => sameRootIdentity(r, recorded))) g.recorded.push(recorded);
  }
  return [...groups.values()];
}

function share(g: Group): string {
  return `${g.removableDrawers} of its ${g.drawers} drawers (${g.removableFiles} files) would be deleted`;
}

async function filesystemChanged(g: Group): Promise<SyncGuardReason | undefined> {
  if (g.recorded.length === 0) return undefined;
  // Nothing at the root's path: no file under it can be witnessed missing, so nothing is at stake.
  const now = await currentRootIdentity(g.root);
  if (!now) return undefined;
  const other = g.recorded.find((r) => !sameRootIdentity(r, now));
  if (!other) return undefined;
  return {
    rule: 'filesystem_changed',
    wing: g.wing,
    source_root: g.root,
    source_drawers: g.drawers,
    removable_drawers: g.removableDrawers,
    removable_files: g.removableFiles,
    detail:
      `${g.root} (wing ${g.wing}) is not the directory it was mined from (device ${other.root_dev} inode ${other.root_ino} then, device ${now.root_dev} inode ${now.root_ino} now: an unmounted volume or a replaced directory); ${
        share(g)
      }`,
  };
}

function massDeletion(g: Group): SyncGuardReason | undefined {
  if (g.removableFiles < MASS_DELETION_MIN_FILES || g.removableDrawers <= g.drawers * MASS_DELETION_SHARE) return undefined;
  return {
    rule: 'mass_deletion',
    wing: g.wing,
    source_root: g.root,
    source_drawers: g.drawers,
    removable_drawers: g.removableDrawers,
    removable_files: g.removableFiles,
    detail: `${g.root} (wing ${g.wing}): ${share(g)}, more than ${MASS_DELETION_SHARE * 100} %`,
  };
}

/** The guard over a sync's classified sources; only groups with something to delete can stop it. */
export async function syncGuard(sources: GuardedSource[], forced: boolean): Promise<SyncGuard> {
  const reasons: SyncGuardReason[] = [];
  for (const g of groupsOf(sources)) {
    if (g.removableDrawers === 0) continue;
    const changed = await filesystemChanged(g);
    if (changed) reasons.push(changed);
    const mass = massDeletion(g);
    if (mass) reasons.push(mass);
  }
  const details = reasons.map((r) => r.detail).join('; ');
  const message = reasons.length === 0 ?
    ''
    : forced ?
    `the sync guard was forced: ${details}.`
    : `the sync guard stops an apply: ${details}. Nothing is deleted unless forced (CLI --force, MCP/REST force: true).`;
  return { needs_force: reasons.length > 0, forced, stopped: false, reasons, message };
}
