/**
 * The job request models (jobs/requests.ts): what a request becomes, and how a bad one is
 * refused (field, rule, message), independent of the transport that brought it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PalaceError } from '../../core/errors.js';
import { parseJobRequest } from '../../jobs/requests.js';
import { sourcePolicy } from '../../palace/sources/sources.js';

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'job-requests-')));
fs.mkdirSync(path.join(root, 'project'));
const policy = sourcePolicy({ allowedRoots: [root], sources: { requireAllowedRoots: false, gitAllowedHosts: [], gitTimeoutMs: 1000, gitMaxBytes: 1 } });

async function refusal(p: Promise<unknown>): Promise<Pick<PalaceError, 'code' | 'field' | 'rule' | 'message'>> {
  const e = (await p.then(() => undefined, (x: unknown) => x)) as PalaceError | undefined;
  if (!e) throw new Error('expected a refusal');
  return { code: e.code, field: e.field, rule: e.rule, message: e.message };
}

describe('parseJobRequest', () => {
  it('turns a mine request into its spec with the documented defaults', async () => {
    const spec = await parseJobRequest('mine', { source: path.join(root, 'project'), wing: '  w  ', include_ignored: [' a/b '] }, { policy });
    expect(spec).toEqual({
      kind: 'mine',
      source: { kind: 'dir', path: path.join(root, 'project') },
      mode: 'projects',
      wing: 'w',
      sourceBounds: policy.bounds,
      agent: 'mempalace',
      limit: 0,
      dryRun: false,
      extract: 'exchange',
      respectGitignore: true,
      includeIgnored: ['a/b'],
    });
    const as = await parseJobRequest('mine', { source: path.join(root, 'project') }, { policy, agent: 'alice' });
    expect(as.agent).toBe('alice');
    const named = await parseJobRequest('mine', { source: path.join(root, 'project'), agent: 'bob' }, { policy, agent: 'alice' });
    expect(named.agent).toBe('bob');
  });

  it('treats a blank sync wing or project_dir as absent, and refuses apply with neither', async () => {
    expect(await parseJobRequest('sync', { wing: ' ', project_dir: '' }, { policy })).toEqual({ kind: 'sync', wing: undefined, projectDir: undefined,
      apply: false, sourceBounds: policy.bounds });
    expect(await refusal(parseJobRequest('sync', { apply: true, wing: '  ' }, { policy }))).toMatchObject({ field: 'apply', rule: 'scope_required' });
  });

  it("carries a sync's force (the sync guard's override) to its spec, and refuses one that is not a boolean", async () => {
    expect(await parseJobRequest('sync', { wing: 'w', apply: true, force: true }, { policy })).toEqual({ kind: 'sync', wing: 'w', projectDir: undefined,
      apply: true, force: true, sourceBounds: policy.bounds });
    expect(await parseJobRequest('sync', { wing: 'w', apply: true, force: false }, { policy })).not.toHaveProperty('force');
    expect(await refusal(parseJobRequest('sync', { wing: 'w', apply: true, force: 'yes' }, { policy }))).toMatchObject({ code: 'invalid_argument',
      field: 'force' });
  });

  it('checks the wing name before it keeps a git credential, so a refused mine writes nothing', async () => {
    const kept: string[] = [];
    const credentials = { put: async (url: string) => {
      kept.push(url);
    } };
    const request = { source: 'https://user:secret@git.example.test/repo.git', ref: 'main', wing: 'a/b' };
    expect(await refusal(parseJobRequest('mine', request, { policy, credentials }))).toMatchObject({ field: 'wing', rule: 'path_characters' });
    expect(kept).toEqual([]);
  });

  it('keeps a delete_by_source value exactly, dry run by default', async () => {
    expect(await parseJobRequest('delete_by_source', { source_file: ' notes.md ' }, { policy })).toEqual({ kind: 'delete_by_source', sourceFile: ' notes.md ',
      dryRun: true, sourceBounds: policy.bounds });
  });

  it('refuses bad fields naming the field, the rule and the message', async () => {
    const cases: [Parameters<typeof parseJobRequest>[0], unknown, string, string, string][] = [
      ['mine', {}, 'source', 'required', 'source is required'],
      ['mine', { source: 'x', nope: 1 }, 'nope', 'unknown_property', "unknown property 'nope'"],
      ['mine', { source: ' ' }, 'source', 'non_empty_string', 'source must be a non-empty string'],
      ['mine', { source: 'x', mode: 'code' }, 'mode', 'enum', "invalid mode 'code'; expected one of: projects, convos, extract"],
      ['mine', { source: 'x', limit: 1.5 }, 'limit', 'type', 'limit must be an integer'],
      ['mine', { source: 'x', limit: -1 }, 'limit', 'minimum', 'limit must be ≥ 0'],
      ['mine', { source: 'x', include_ignored: ['a', ''] }, 'include_ignored.1', 'non_empty_string', 'include_ignored.1 must be a non-empty string'],
      ['mine', '{"source":"x"}', 'body', 'type', 'body must be an object'],
      ['mine', { source: '/etc' }, 'source', 'allowed_roots', `source '/etc' is outside the allowed roots (${root})`],
      ['delete_by_source', { source_file: 7 }, 'source_file', 'type', 'source_file must be a non-empty string'],
      ['reembed', { model: '' }, 'model', 'non_empty_string', 'model must be a non-empty string'],
      ['mine', { source: 'x', wing: 'a/b' }, 'wing', 'path_characters', 'wing contains invalid path characters'],
      ['mine', { source: 'x', wing: '-w-' }, 'wing', 'name_pattern', 'wing contains invalid characters'],
      ['sync', { wing: '..' }, 'wing', 'path_characters', 'wing contains invalid path characters'],
      ['sync', { wing: 'w'.repeat(129), apply: true }, 'wing', 'max_length', 'wing exceeds maximum length of 128 characters'],
    ];
    for (const [kind, request, field, rule, message] of cases) {
      expect(await refusal(parseJobRequest(kind, request, { policy })), JSON.stringify(request)).toEqual({ code: 'invalid_argument', field, rule, message });
    }
  });
});
