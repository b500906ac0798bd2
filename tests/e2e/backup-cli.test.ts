/**
 * `mempalace export | import | migrate | repair` as a user runs them (a child process per
 * command): a mined palace is exported and imported into a second one with the same counts;
 * a bad, missing or directory file is refused with exit code 2 and a structured error; `repair --check` reports a
 * deleted ANN file with exit code 1 and changes nothing, `repair` fixes it; `migrate --to
 * cluster` copies into the running engines and reports the copy identical, and back.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import { dropClusterPalace } from '../helpers/cluster-palace.js';
import type { JsonCliRun } from '../helpers/cli.js';
import { embeddedJsonCli } from '../helpers/cli.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mempalace-backup-cli-'));
const palaceName = `cli-bk-${process.pid}-${Date.now().toString(36)}`;

function mempalace(palace: string, ...args: string[]): JsonCliRun {
  return embeddedJsonCli(palace, { MEMPALACE_PALACE_NAME: palaceName, MEMPALACE_ALLOWED_ROOTS: tmp, MEMPALACE_ENTITY_REGISTRY: path.join(tmp, 'none.json') })(
    ...args,
  );
}

afterAll(async () => {
  await dropClusterPalace(loadConfig({ ...process.env, MEMPALACE_PROFILE: 'cluster', MEMPALACE_PALACE_NAME: palaceName }));
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('mempalace export, import, migrate, repair', () => {
  const palace = path.join(tmp, 'palace');
  const file = path.join(tmp, 'backup.jsonl.gz');

  it('exports a mined palace and imports it into another with the same counts', () => {
    const project = path.join(tmp, 'harbour');
    fs.mkdirSync(path.join(project, 'docs'), { recursive: true });
    for (let i = 0; i < 6; i++)
      fs.writeFileSync(path.join(project, 'docs', `note${i}.md`), `Harbour note ${i}: the storm gate closes at force nine; berth ${i} takes deep ships.\n`);
    expect(mempalace(palace, 'mine', project).code).toBe(0);
    const exported = mempalace(palace, 'export', file);
    expect(exported.code).toBe(0);
    expect(exported.json).toMatchObject({ counts: { drawer: 6, file_state: 6 }, model: { name: 'all-MiniLM-L6-v2', dimension: 384 } });
    const copy = path.join(tmp, 'copy');
    const imported = mempalace(copy, 'import', file);
    expect(imported.code).toBe(0);
    expect(imported.json).toMatchObject({ counts: { drawer: 6, file_state: 6 }, resumed_from: 0 });
    expect(mempalace(copy, 'status').json).toMatchObject({ total_drawers: 6, wings: { harbour: 6 } });
  });

  it('refuses a file that is not an export with exit code 2, naming the field and rule', () => {
    const bad = path.join(tmp, 'not-an-export.txt');
    fs.writeFileSync(bad, 'hello');
    const res = mempalace(path.join(tmp, 'bad-target'), 'import', bad);
    expect(res.code).toBe(2);
    expect(res.json).toMatchObject({ code: 'invalid_argument', field: 'file', rule: 'gzip' });
  });

  it('refuses a missing file or a directory with exit code 2 and a structured error, no stack trace (issue 24, I5)', () => {
    const target = path.join(tmp, 'missing-target');
    for (const [file, rule] of [[path.join(tmp, 'no-such-backup.jsonl.gz'), 'exists'], [tmp, 'regular_file']] as const) {
      const res = mempalace(target, 'import', file);
      expect(res.code).toBe(2);
      expect(res.json).toMatchObject({ code: 'invalid_argument', field: 'file', rule });
      expect(res.stderr).not.toMatch(/^\s+at /m);
    }
  });

  it('repair --check reports a deleted ANN file and changes nothing; repair fixes it', () => {
    const ann = path.join(palace, 'drawers.hnsw');
    fs.rmSync(ann);
    const check = mempalace(palace, 'repair', '--check');
    expect(check.code).toBe(1);
    expect(check.json).toMatchObject({ checked_only: true, before: { findings: [{ part: 'ann', problem: 'graph file missing' }] } });
    expect(fs.existsSync(ann)).toBe(false);
    const fixed = mempalace(palace, 'repair');
    expect(fixed.code).toBe(0);
    expect(fixed.json).toMatchObject({ rebuilt: { fts_rows: 6, ann_labels: 6 }, after: { findings: [] } });
    expect(fs.existsSync(ann)).toBe(true);
  });

  it('migrate --to cluster copies into the engines and verifies the copy; --to embedded copies it back', () => {
    const there = mempalace(palace, 'migrate', '--to', 'cluster');
    expect(there.stderr).toBe('');
    expect(there.code).toBe(0);
    expect(there.json).toMatchObject({ copy: { counts: { drawer: 6 } }, verification: { ok: true, mismatches: [] } });
    const back = path.join(tmp, 'back');
    const returned = mempalace(back, 'migrate', '--to', 'embedded');
    expect(returned.code).toBe(0);
    expect(returned.json).toMatchObject({ verification: { ok: true } });
    expect(mempalace(back, 'status').json).toMatchObject({ total_drawers: 6 });
  });
});
