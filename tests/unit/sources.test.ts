/**
 * The source resolver (palace/sources/sources.ts) against a real filesystem: canonical real paths, every
 * kind of root bound, symlinks (the source itself, a directory above it, a root that is itself
 * under a link), the git URL policy (schemes, remote helpers, allowed hosts, non-public
 * addresses resolved through DNS), and reads of listed files that were swapped for links.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ListedFileRefused, readListedFile } from '../../palace/sources/listed-file.js';
import type { SourcePolicy } from '../../palace/sources/sources.js';
import { assertStoredSourceAllowed, isNonPublicAddress, isWithin, matchAllowedHost, resolveGitSource, resolveLocalSource, resolveMineSource,
  sourcePolicy } from '../../palace/sources/sources.js';
import { makeTempDir, removeDir } from '../helpers/tmp.js';

const tmp = fs.realpathSync(makeTempDir('mempalace-sources-'));
afterAll(() => removeDir(tmp));

const allowed = path.join(tmp, 'allowed');
const outside = path.join(tmp, 'outside');
fs.mkdirSync(path.join(allowed, 'project', 'src'), { recursive: true });
fs.mkdirSync(path.join(allowed, 'other'), { recursive: true });
fs.mkdirSync(path.join(outside, 'secrets'), { recursive: true });
fs.writeFileSync(path.join(outside, 'secrets', 'passwd.txt'), 'root:x:0:0:OUTSIDE-SECRET\n');
fs.writeFileSync(path.join(allowed, 'project', 'src', 'a.md'), 'inside\n');
fs.symlinkSync(path.join(outside, 'secrets'), path.join(allowed, 'linkdir'));
fs.symlinkSync(path.join(outside, 'secrets', 'passwd.txt'), path.join(allowed, 'passwd.txt'));
fs.symlinkSync(path.join(allowed, 'project'), path.join(allowed, 'inside-link'));
// A root configured through a symlink is honoured at its real path too.
fs.symlinkSync(allowed, path.join(tmp, 'allowed-alias'));

const config = (roots: string[], extra: Partial<{ requireAllowedRoots: boolean; gitAllowedHosts: string[] }> = {}) => ({
  allowedRoots: roots,
  sources: { requireAllowedRoots: false, gitAllowedHosts: [], gitTimeoutMs: 60_000, gitMaxBytes: 1 << 30, ...extra },
});
const bounded: SourcePolicy = sourcePolicy(config([allowed]));

async function refusal(p: Promise<unknown>): Promise<{ code: string; field?: string; rule?: string; message: string }> {
  try {
    await p;
  } catch (e) {
    return e as { code: string; field?: string; rule?: string; message: string };
  }
  throw new Error('expected a refusal');
}

describe('local sources', () => {
  it('resolves a directory inside the roots to its canonical real path, also through an inside link', async () => {
    expect(await resolveLocalSource('source', path.join(allowed, 'project'), bounded)).toBe(path.join(allowed, 'project'));
    expect(await resolveLocalSource('source', path.join(allowed, 'inside-link'), bounded)).toBe(path.join(allowed, 'project'));
    expect(await resolveLocalSource('source', `file://${path.join(allowed, 'project')}`, bounded)).toBe(path.join(allowed, 'project'));
    const viaAlias = sourcePolicy(config([path.join(tmp, 'allowed-alias')]));
    expect(await resolveLocalSource('source', path.join(allowed, 'project'), viaAlias)).toBe(path.join(allowed, 'project'));
  });

  it('refuses a directory symlink, a file symlink and a path under a symlink that lead outside', async () => {
    for (const [value, allowFile] of [[path.join(allowed, 'linkdir'), false], [path.join(allowed, 'passwd.txt'), true], [
      path.join(allowed, 'linkdir', 'passwd.txt'),
      true,
    ]] as const) {
      const e = await refusal(resolveLocalSource('source', value, bounded, { allowFile }));
      expect(e, value).toMatchObject({ code: 'invalid_argument', field: 'source', rule: 'symlink_outside_roots' });
    }
  });

  it('refuses a path outside the roots before reading anything there (no existence probe)', async () => {
    const missing = await refusal(resolveLocalSource('source', path.join(outside, 'nothing-here'), bounded));
    const present = await refusal(resolveLocalSource('source', path.join(outside, 'secrets'), bounded));
    expect(missing).toMatchObject({ field: 'source', rule: 'allowed_roots' });
    expect(present).toMatchObject({ field: 'source', rule: 'allowed_roots' });
    const sibling = await refusal(resolveLocalSource('source', `${allowed}-evil`, bounded));
    expect(sibling.rule).toBe('allowed_roots');
  });

  it('intersects the server roots with the token roots and the client roots, naming the bound broken', async () => {
    const token = sourcePolicy(config([allowed]), { tokenRoots: [path.join(allowed, 'project')] });
    expect(await resolveLocalSource('source', path.join(allowed, 'project', 'src'), token)).toBe(path.join(allowed, 'project', 'src'));
    expect(await refusal(resolveLocalSource('source', path.join(allowed, 'other'), token))).toMatchObject({ rule: 'token_roots' });
    const client = sourcePolicy(config([]), { clientRoots: [path.join(allowed, 'other')] });
    expect(await refusal(resolveLocalSource('project_dir', path.join(allowed, 'project'), client))).toMatchObject({ field: 'project_dir',
      rule: 'client_roots' });
    // A token root outside the server roots grants nothing beyond them.
    const wider = sourcePolicy(config([path.join(allowed, 'project')]), { tokenRoots: [tmp] });
    expect(await refusal(resolveLocalSource('source', path.join(allowed, 'other'), wider))).toMatchObject({ rule: 'allowed_roots' });
  });

  it('a server that requires roots and has none reads no local source', async () => {
    const none = sourcePolicy(config([], { requireAllowedRoots: true }));
    const e = await refusal(resolveLocalSource('source', path.join(allowed, 'project'), none));
    expect(e).toMatchObject({ rule: 'local_sources_disabled' });
    expect(e.message).toContain('--allow-any-source');
    // Deleting by a stored value reads nothing, so it is still allowed; token roots still bound it.
    await expect(assertStoredSourceAllowed('source_file', path.join(outside, 'x.md'), none)).resolves.toBeUndefined();
    const token = sourcePolicy(config([], { requireAllowedRoots: true }), { tokenRoots: [allowed] });
    expect(await refusal(assertStoredSourceAllowed('source_file', path.join(outside, 'x.md'), token))).toMatchObject({ field: 'source_file',
      rule: 'token_roots' });
  });

  it('without any bound (CLI, stdio) any readable directory resolves, as before', async () => {
    expect(await resolveLocalSource('source', path.join(allowed, 'linkdir'), sourcePolicy(config([])))).toBe(path.join(outside, 'secrets'));
  });

  it('isWithin does not confuse a sibling with a common prefix, nor a dot-dot name', () => {
    expect(isWithin('/a/b', '/a/b')).toBe(true);
    expect(isWithin('/a/b', '/a/b/c')).toBe(true);
    expect(isWithin('/a/b', '/a/bc')).toBe(false);
    expect(isWithin('/a/b', '/a')).toBe(false);
    expect(isWithin('/a/b', '/a/b/..c')).toBe(true);
  });
});

describe('git source policy', () => {
  const repo = path.join(outside, 'repo');
  fs.mkdirSync(path.join(repo, '.git'), { recursive: true });
  const insideRepo = path.join(allowed, 'repo');
  fs.mkdirSync(path.join(insideRepo, '.git', 'objects', 'info'), { recursive: true });

  it('refuses remote helpers, other schemes and option-like URLs', async () => {
    const policy = sourcePolicy(config([allowed], { gitAllowedHosts: ['*'] }));
    for (const url of ['ext::sh -c touch% /tmp/pwned', 'ext::sh', 'fd::17', 'http://127.0.0.1:9/x.git', 'git://example.com/x.git', 'ftp://example.com/x.git']) {
      const e = await refusal(resolveGitSource('source', url, policy));
      expect(['git_scheme', 'git_url'], url).toContain(e.rule);
      expect(e.field).toBe('source');
    }
    expect(await refusal(resolveGitSource('source', '--upload-pack=touch /tmp/x', policy))).toMatchObject({ rule: 'git_url' });
  });

  it('treats file:// URLs and plain repository paths as directories under the roots', async () => {
    expect(await refusal(resolveGitSource('source', `file://${repo}`, bounded))).toMatchObject({ rule: 'allowed_roots' });
    expect(await refusal(resolveGitSource('source', repo, bounded))).toMatchObject({ rule: 'allowed_roots' });
    expect(await resolveGitSource('source', insideRepo, bounded)).toEqual({ transport: 'file', url: `file://${insideRepo}`, path: insideRepo });
    fs.writeFileSync(path.join(insideRepo, '.git', 'objects', 'info', 'alternates'), `${repo}/.git/objects\n`);
    expect(await refusal(resolveGitSource('source', insideRepo, bounded))).toMatchObject({ rule: 'git_alternates' });
    fs.rmSync(path.join(insideRepo, '.git', 'objects', 'info', 'alternates'));
  });

  it('refuses network git without allowed hosts, and hosts or ports not listed', async () => {
    expect(await refusal(resolveGitSource('source', 'https://example.com/x.git', bounded))).toMatchObject({ rule: 'git_allowed_hosts' });
    const policy = sourcePolicy(config([], { gitAllowedHosts: ['git.example.com', '*.corp.example:8443'] }));
    expect(await refusal(resolveGitSource('source', 'https://other.example.com/x.git', policy))).toMatchObject({ rule: 'git_allowed_hosts' });
    expect(await refusal(resolveGitSource('source', 'https://git.example.com:8443/x.git', policy))).toMatchObject({ rule: 'git_allowed_hosts' });
    expect(await refusal(resolveGitSource('source', 'git@other.example.com:team/x.git', policy))).toMatchObject({ rule: 'git_allowed_hosts' });
  });

  it('refuses loopback, private and link-local addresses (resolved through DNS) unless the host is listed exactly', async () => {
    const wildcard = sourcePolicy(config([], { gitAllowedHosts: ['*', '*:8443'] }));
    for (const url of ['https://127.0.0.1:8443/x.git', 'https://localhost:8443/x.git', 'https://[::1]:8443/x.git', 'https://10.1.2.3/x.git',
      'https://169.254.169.254/x.git', 'ssh://192.168.1.10/x.git']) {
      expect(await refusal(resolveGitSource('source', url, wildcard)), url).toMatchObject({ field: 'source', rule: 'git_private_address' });
    }
    const exact = sourcePolicy(config([], { gitAllowedHosts: ['127.0.0.1:8443'] }));
    expect(await resolveGitSource('source', 'https://127.0.0.1:8443/x.git', exact)).toMatchObject({ transport: 'https', host: '127.0.0.1', port: 8443,
      addresses: ['127.0.0.1'] });
  });

  it('classifies addresses and matches host patterns', () => {
    for (const a of ['127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.0.1', '169.254.1.1', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1',
      '::ffff:127.0.0.1']) expect(isNonPublicAddress(a), a).toBe(true);
    for (const a of ['93.184.216.34', '2606:4700::1111', '172.32.0.1']) expect(isNonPublicAddress(a), a).toBe(false);
    expect(matchAllowedHost(['github.com'], 'github.com', 443, 443)).toEqual({ explicit: true });
    expect(matchAllowedHost(['github.com'], 'github.com', 8443, 443)).toBeUndefined();
    expect(matchAllowedHost(['*.example.com'], 'a.example.com', 443, 443)).toEqual({ explicit: false });
    expect(matchAllowedHost(['*.example.com'], 'example.com', 443, 443)).toBeUndefined();
    expect(matchAllowedHost(['*.example.com'], 'evilexample.com', 443, 443)).toBeUndefined();
  });

  it('a mine source with a ref is a git source; without one a directory', async () => {
    expect(await resolveMineSource({ source: insideRepo, ref: 'main', allowFile: false }, bounded)).toEqual({ kind: 'git', url: `file://${insideRepo}`,
      ref: 'main' });
    expect(await resolveMineSource({ source: path.join(allowed, 'project'), allowFile: false }, bounded)).toEqual({ kind: 'dir',
      path: path.join(allowed, 'project') });
    expect(await refusal(resolveMineSource({ source: insideRepo, ref: '--orphan', allowFile: false }, bounded))).toMatchObject({ field: 'ref',
      rule: 'git_ref' });
  });
});

describe('reading a listed file', () => {
  it('reads a regular file, and refuses one swapped for a symlink or moved under a symlinked directory', async () => {
    const dir = path.join(allowed, 'swap');
    fs.mkdirSync(path.join(dir, 'sub'), { recursive: true });
    const file = path.join(dir, 'sub', 'note.md');
    fs.writeFileSync(file, 'inside note\n');
    expect((await readListedFile(file)).bytes.toString()).toBe('inside note\n');

    fs.rmSync(file);
    fs.symlinkSync(path.join(outside, 'secrets', 'passwd.txt'), file);
    const link = await refusal(readListedFile(file));
    expect(link).toBeInstanceOf(ListedFileRefused);
    expect((link as unknown as ListedFileRefused).reason).toBe('symlink');

    // The directory above the file swapped for a link to a directory holding the same name.
    fs.rmSync(path.join(dir, 'sub'), { recursive: true });
    fs.mkdirSync(path.join(outside, 'sub'));
    fs.writeFileSync(path.join(outside, 'sub', 'note.md'), 'OUTSIDE-SECRET\n');
    fs.symlinkSync(path.join(outside, 'sub'), path.join(dir, 'sub'));
    const parent = await refusal(readListedFile(file));
    expect((parent as unknown as ListedFileRefused).reason).toBe('symlink');
  });
});
