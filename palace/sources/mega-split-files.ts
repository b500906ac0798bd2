/**
 * `mempalace split <dir>` (docs/palace-behaviour.md §5.9): the file side of mega-file splitting.
 * Each `.txt` directly in the directory that holds several Claude Code sessions is cut into one
 * file per session (core/chat/mega-split.ts plans the cut), written beside it or into an output
 * directory, and the original is renamed to `.mega_backup` last, so a run cut short leaves the
 * original in place and a second run finishes it: a part already written with the same content
 * is kept, one with other content is refused, never overwritten.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_MIN_SESSIONS, planMegaSplit } from '../../core/chat/mega-split.js';
import { invalidArgument, PalaceError } from '../../core/errors.js';

/** Files larger than this are passed over, like a mine passes over them (docs/palace-behaviour.md §5.9). */
const MAX_SPLIT_BYTES = 500 * 1024 * 1024;
const MEGA_BACKUP_SUFFIX = '.mega_backup';

export interface SplitOptions {
  /** Where the parts go; the file's own directory when absent. */
  outputDir?: string | undefined;
  dryRun: boolean;
  minSessions?: number | undefined;
  /** People to name parts after (the entity registry's people). */
  knownNames?: readonly string[] | undefined;
}

export interface SplitFile {
  file: string;
  sessions: number;
  /** The parts' paths, written (or, on a dry run, that would be). */
  parts: string[];
  skipped_fragments: number;
  /** Where the original went; absent on a dry run. */
  backup?: string;
}

export interface SplitReport {
  dir: string;
  dry_run: boolean;
  files_scanned: number;
  /** Files with enough sessions to split. */
  files: SplitFile[];
  /** Files over the size bound, not read. */
  too_large: string[];
}

async function writePart(file: string, content: string): Promise<void> {
  try {
    await fs.writeFile(file, content, { flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    if ((await fs.readFile(file, 'utf8')) !== content) {
      throw new PalaceError('conflict', `${file} exists with other content; move it away and split again`, { field: 'output_dir', rule: 'part_exists' });
    }
  }
}

export async function splitMegaFiles(dir: string, options: SplitOptions): Promise<SplitReport> {
  const root = path.resolve(dir);
  const stat = await fs.stat(root).catch(() => undefined);
  if (!stat?.isDirectory()) throw invalidArgument('dir', 'directory', `${root} is not a directory`);
  const minSessions = options.minSessions ?? DEFAULT_MIN_SESSIONS;
  if (!Number.isInteger(minSessions) || minSessions < 2) throw invalidArgument('min_sessions', 'minimum', 'min_sessions must be an integer of at least 2');
  const outputDir = options.outputDir === undefined ? undefined : path.resolve(options.outputDir);
  const entries = (await fs.readdir(root, { withFileTypes: true })).filter((e) => e.isFile() && e.name.endsWith('.txt')).map((e) => e.name).sort();
  const report: SplitReport = { dir: root, dry_run: options.dryRun, files_scanned: entries.length, files: [], too_large: [] };
  if (outputDir !== undefined && !options.dryRun) await fs.mkdir(outputDir, { recursive: true });
  for (const name of entries) {
    const file = path.join(root, name);
    if ((await fs.stat(file)).size > MAX_SPLIT_BYTES) {
      report.too_large.push(file);
      continue;
    }
    const plan = planMegaSplit(await fs.readFile(file, 'utf8'), { sourceStem: path.basename(name, '.txt'), knownNames: options.knownNames ?? [], minSessions });
    if (plan.parts.length === 0) continue;
    const target = outputDir ?? root;
    const split: SplitFile = { file, sessions: plan.sessionStarts, parts: plan.parts.map((p) => path.join(target, p.fileName)),
      skipped_fragments: plan.skippedFragments };
    if (!options.dryRun) {
      for (const [i, part] of plan.parts.entries()) await writePart(split.parts[i]!, part.content);
      split.backup = `${file}${MEGA_BACKUP_SUFFIX}`;
      await fs.rename(file, split.backup);
    }
    report.files.push(split);
  }
  return report;
}
