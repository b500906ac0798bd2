/**
 * The MCP Inspector CLI (pinned in tests/tools/inspector) in `--strict` mode over stdio and
 * Streamable HTTP: it lists the 45 tools and reports no schema portability finding (it prints
 * one `Error:`/`Warning:` block per finding and exits 6 on an error-severity one).
 * Install it with: npm ci --prefix tests/tools/inspector --engine-strict=false
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './mcp-harness.js';
import { ROOT, startHttp, tempDir } from './mcp-harness.js';

const run = promisify(execFile);
const INSPECTOR = path.join(ROOT, 'tests', 'tools', 'inspector', 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build',
  'index.js');

async function inspect(args: string[]): Promise<{ tools: string[]; stderr: string }> {
  if (!fs.existsSync(INSPECTOR)) throw new Error(`the Inspector CLI is not installed; run: npm ci --prefix tests/tools/inspector --engine-strict=false`);
  const { stdout, stderr } = await run(process.execPath, [INSPECTOR, '--cli', '--method', 'tools/list', '--strict', '--connect-timeout', '180000', ...args], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
    timeout: 240_000,
  });
  return { tools: (JSON.parse(stdout) as { tools: { name: string }[] }).tools.map((t) => t.name), stderr };
}

function expectClean(result: { tools: string[]; stderr: string }): void {
  expect(result.tools).toHaveLength(45);
  const findings = result.stderr.split('\n').filter((l) => /^(Error|Warning): tool |portability/.test(l));
  expect(findings).toEqual([]);
}

describe('MCP Inspector CLI --strict', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHttp();
  });
  afterAll(async () => h.close());

  it('reports 0 errors and 0 warnings over stdio', async () => {
    expectClean(await inspect([
      '-e',
      `MEMPALACE_PALACE=${tempDir('palace')}`,
      '-e',
      `MEMPALACE_TEST_HOME=${tempDir('home')}`,
      process.execPath,
      path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'),
      path.join(ROOT, 'tests', 'fixtures', 'mcp-stdio-server.ts'),
    ]));
  });

  it('reports 0 errors and 0 warnings over Streamable HTTP', async () => {
    expectClean(await inspect(['--transport', 'http', '--server-url', h.url!, '--header', 'Authorization: Bearer tok-admin']));
  });
});
