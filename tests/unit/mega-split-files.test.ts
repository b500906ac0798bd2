/**
 * `mempalace split <dir>` on files (docs/palace-behaviour.md §5.9): a dry run writes nothing; a
 * run writes one file per session with the exact bytes of its slice and keeps the original as
 * `.mega_backup`; a run cut short before the rename is finished by a second run; a part that
 * exists with other content is refused and nothing else changes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { planMegaSplit } from '../../core/chat/mega-split.js';
import { splitMegaFiles } from '../../palace/sources/mega-split-files.js';
import { makeTempDir, removeDir } from '../helpers/tmp.js';

const MEGA = fs.readFileSync(new URL('../fixtures/chat/mega-sessions.txt', import.meta.url), 'utf8');
const dirs: string[] = [];

function exportDir(): string {
  const dir = makeTempDir('mp-split-');
  dirs.push(dir);
  fs.writeFileSync(path.join(dir, 'mega-sessions.txt'), MEGA);
  fs.writeFileSync(path.join(dir, 'single.txt'), 'Claude Code v1.0.0\n> one session only\n');
  return dir;
}

const listing = (dir: string) => fs.readdirSync(dir).sort();

afterEach(() => {
  for (const dir of dirs.splice(0)) removeDir(dir);
});

describe('splitMegaFiles', () => {
  it('reports the parts on a dry run and writes nothing', async () => {
    const dir = exportDir();
    const report = await splitMegaFiles(dir, { dryRun: true, knownNames: ['Olek'] });
    expect(report.files_scanned).toBe(2);
    expect(report.files.map((f) => [path.basename(f.file), f.sessions, f.parts.length, f.skipped_fragments])).toEqual([['mega-sessions.txt', 3, 2, 1]]);
    expect(listing(dir)).toEqual(['mega-sessions.txt', 'single.txt']);
  });

  it('writes each session verbatim, keeps the original as .mega_backup, and a second run changes nothing', async () => {
    const dir = exportDir();
    const out = path.join(dir, 'sessions');
    const report = await splitMegaFiles(dir, { dryRun: false, outputDir: out });
    const expected = planMegaSplit(MEGA, { sourceStem: 'mega-sessions' }).parts;
    expect(listing(out)).toEqual(expected.map((p) => p.fileName).sort());
    for (const part of expected) expect(fs.readFileSync(path.join(out, part.fileName), 'utf8')).toBe(part.content);
    expect(report.files[0]!.backup).toBe(path.join(dir, 'mega-sessions.txt.mega_backup'));
    expect(fs.readFileSync(report.files[0]!.backup!, 'utf8')).toBe(MEGA);
    expect(listing(dir)).toEqual(['mega-sessions.txt.mega_backup', 'sessions', 'single.txt']);
    const again = await splitMegaFiles(dir, { dryRun: false, outputDir: out });
    expect(again.files).toEqual([]);
  });

  it('finishes a run cut short before the rename, and refuses a part that holds other content', async () => {
    const dir = exportDir();
    const [first, second] = planMegaSplit(MEGA, { sourceStem: 'mega-sessions' }).parts;
    // A run that wrote the first part and died: the second run keeps it and goes on.
    fs.writeFileSync(path.join(dir, first!.fileName), first!.content);
    const report = await splitMegaFiles(dir, { dryRun: false });
    expect(report.files[0]!.parts.map((p) => path.basename(p))).toEqual([first!.fileName, second!.fileName]);
    expect(fs.readFileSync(path.join(dir, second!.fileName), 'utf8')).toBe(second!.content);

    const other = exportDir();
    fs.writeFileSync(path.join(other, second!.fileName), 'someone else wrote this');
    await expect(splitMegaFiles(other, { dryRun: false })).rejects.toMatchObject({ code: 'conflict', rule: 'part_exists' });
    expect(fs.readFileSync(path.join(other, 'mega-sessions.txt'), 'utf8')).toBe(MEGA);
    expect(fs.readFileSync(path.join(other, second!.fileName), 'utf8')).toBe('someone else wrote this');
  });

  it('refuses a directory that does not exist and a min_sessions below 2, naming the field', async () => {
    await expect(splitMegaFiles('/nonexistent/mp-split', { dryRun: true })).rejects.toMatchObject({ field: 'dir', rule: 'directory' });
    await expect(splitMegaFiles(exportDir(), { dryRun: true, minSessions: 1 })).rejects.toMatchObject({ field: 'min_sessions', rule: 'minimum' });
  });
});
