import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareCodePoints, decodeUtf8File, sniffBytes } from '../../core/scan.js';
import { isGitignored, scanProject } from '../../palace/sources/scan.js';
import type { ScannedFile, ScanOptions, ScanSkip } from '../../core/scan.js';

/** The whole scan at once: files and reported skips, each in path order. */
async function scanManifest(root: string, options: ScanOptions = {}): Promise<{ root: string; files: ScannedFile[]; skipped: ScanSkip[] }> {
  const files: ScannedFile[] = [];
  const skipped: ScanSkip[] = [];
  for await (const entry of scanProject(root, options)) {
    if (entry.kind === 'file') files.push(entry.file);
    else skipped.push(entry.skip);
  }
  return { root: await realpath(root), files, skipped };
}

let root: string;

const tree: Record<string, string | Uint8Array> = {
  '.gitignore': '*.gen.ts\n!keep.gen.ts\n/anchored.md\nout/\n!out/keep.md\n\\!bang.md\nUpper.md\n',
  'a.gen.ts': 'x',
  'keep.gen.ts': 'x',
  'anchored.md': 'x',
  'sub/anchored.md': 'x',
  'out/x.md': 'x',
  'out/keep.md': 'x',
  'docs/out/y.md': 'x',
  '!bang.md': 'x',
  'bang.md': 'x',
  'Upper.md': 'x',
  'upper.md': 'x',
  'docs/.gitignore': '!a.gen.ts\n*.md\n!readme.md\n',
  'docs/a.gen.ts': 'x',
  'docs/notes.md': 'x',
  'docs/readme.md': 'x',
  'node_modules/pkg/index.js': 'x',
  'node_modules/other/x.js': 'x',
  'pkg.egg-info/x.txt': 'x',
  'Makefile': 'all:',
  'scripts/run': 'x',
  'package-lock.json': '{}',
  'mempalace.yaml': 'wing: w',
  'a.md': 'x',
  'a-b.md': 'x',
  'a/b.md': 'x',
  'z.md': 'x',
  '\u{FF5E}.md': 'x',
  '😀.md': 'x',
  'bin.txt': new Uint8Array([0x68, 0x69, 0x00, 0x01]),
  'latin1.txt': new Uint8Array([0x63, 0x61, 0x66, 0xe9]),
  'utf16.txt': new Uint8Array([0xff, 0xfe, 0x68, 0x00]),
  'big.md': 'b'.repeat(10_000),
  'cut.md': `${'a'.repeat(8191)}é tail`,
  'UPPER.MD': 'x',
};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mp-scan-'));
  for (const [rel, content] of Object.entries(tree)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), content);
  }
  await symlink(join(root, 'a.md'), join(root, 'link.md'));
  await symlink(join(root, 'docs'), join(root, 'docs-link'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const paths = (m: { files: { relativePath: string }[] }) => m.files.map((f) => f.relativePath);

describe('scan (docs/palace-behaviour.md §4.2, §4.3)', () => {
  it('mines the allowed files in code-point order and follows git ignore semantics', async () => {
    const m = await scanManifest(root, { maxFileBytes: 9000 });
    expect(paths(m)).toEqual([
      'UPPER.MD',
      'a-b.md',
      'a.md',
      'a/b.md',
      'bang.md',
      'cut.md',
      'docs/a.gen.ts',
      'docs/readme.md',
      'keep.gen.ts',
      'sub/anchored.md',
      'upper.md',
      'z.md',
      '\u{FF5E}.md',
      '😀.md',
    ]);
    expect([...paths(m)].sort(compareCodePoints)).toEqual(paths(m));
  });

  it('reports symlinks, binary, non-UTF-8 and oversized files with a reason', async () => {
    const m = await scanManifest(root, { maxFileBytes: 9000 });
    expect(m.skipped.map((s) => [s.relativePath, s.reason])).toEqual([
      ['big.md', 'too_large'],
      ['bin.txt', 'binary'],
      ['latin1.txt', 'not_utf8'],
      ['link.md', 'symlink'],
      ['utf16.txt', 'not_utf8'],
    ]);
    expect(m.skipped[0]!.detail).toContain('10000 bytes');
  });

  it('gives the manifest fields of each file', async () => {
    const m = await scanManifest(root);
    const cut = m.files.find((f) => f.relativePath === 'cut.md')!;
    expect(cut.absolutePath).toBe(join(m.root, 'cut.md'));
    expect(cut.size).toBe(8191 + 2 + 5);
    expect(cut.mtimeMs).toBeGreaterThan(0);
    expect(paths(m)).toContain('big.md'); // the default cap is 10 MiB
  });

  it('force-include bypasses skip dirs, skip names and gitignore; the extension only on an exact match', async () => {
    const m = await scanManifest(root, {
      maxFileBytes: 9000,
      includeIgnored: [' /node_modules/pkg/index.js/ ', 'out', 'a.gen.ts', 'package-lock.json', 'Makefile', 'scripts'],
    });
    const got = paths(m);
    for (const p of ['node_modules/pkg/index.js', 'out/keep.md', 'out/x.md', 'a.gen.ts', 'package-lock.json', 'Makefile']) expect(got).toContain(p);
    expect(got).not.toContain('node_modules/other/x.js');
    expect(got).not.toContain('scripts/run');
  });

  it('a negation cannot re-include a file under an ignored directory', async () => {
    const m = await scanManifest(root);
    expect(paths(m)).not.toContain('out/keep.md');
  });

  it('can ignore .gitignore files', async () => {
    const got = paths(await scanManifest(root, { respectGitignore: false }));
    for (const p of ['a.gen.ts', 'anchored.md', 'out/x.md', 'docs/notes.md', '!bang.md', 'Upper.md']) expect(got).toContain(p);
    expect(got).not.toContain('node_modules/pkg/index.js');
    expect(got).not.toContain('pkg.egg-info/x.txt');
  });

  it('streams entries and rejects a missing root', async () => {
    const first = await scanProject(root).next();
    expect(first.value).toMatchObject({ kind: 'file', file: { relativePath: 'UPPER.MD' } });
    await expect(scanManifest(join(root, 'nope'))).rejects.toMatchObject({ code: 'invalid_argument', field: 'directory' });
  });
});

describe('compareCodePoints', () => {
  it('orders astral characters after the whole BMP, unlike UTF-16 comparison', () => {
    expect(compareCodePoints('\u{FF5E}', '😀')).toBeLessThan(0);
    expect('\u{FF5E}' < '😀').toBe(false);
    expect(compareCodePoints('ab', 'abc')).toBeLessThan(0);
    expect(compareCodePoints('abc', 'abc')).toBe(0);
  });
});

describe('sniffing and decoding', () => {
  it('tolerates a multi-byte sequence cut by the sniff window but not a truncated file', () => {
    const e = new TextEncoder().encode('aé');
    expect(sniffBytes(e.subarray(0, 2), false)).toBeNull();
    expect(sniffBytes(e.subarray(0, 2), true)?.reason).toBe('not_utf8');
  });

  it('decodes whole files and names what is wrong', () => {
    expect(decodeUtf8File(new TextEncoder().encode('\uFEFFhello 😀'))).toEqual({ ok: true, text: 'hello 😀' });
    const late = new Uint8Array(20_000).fill(0x61);
    late[15_000] = 0xff;
    expect(decodeUtf8File(late)).toMatchObject({ ok: false, reason: 'not_utf8' });
    expect(decodeUtf8File(new Uint8Array([0x61, 0x00]))).toMatchObject({ ok: false, reason: 'binary' });
  });
});

describe('isGitignored', () => {
  it('applies the same nested rules to one path, including ignored directories', async () => {
    const cache = new Map();
    expect(await isGitignored(root, 'a.gen.ts', cache)).toBe(true);
    expect(await isGitignored(root, 'keep.gen.ts', cache)).toBe(false);
    expect(await isGitignored(root, 'docs/a.gen.ts', cache)).toBe(false);
    expect(await isGitignored(root, 'docs/notes.md', cache)).toBe(true);
    expect(await isGitignored(root, 'out/keep.md', cache)).toBe(true);
    expect(await isGitignored(root, 'sub/anchored.md', cache)).toBe(false);
    expect(await isGitignored(root, 'missing/dir/file.md', cache)).toBe(false);
  });
});
